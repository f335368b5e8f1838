import sys

from logparse.cli import main

sys.exit(main())

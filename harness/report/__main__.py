from harness.report.cli import main

raise SystemExit(main())

"""logparse: figures and status from BigDL job logs (.out/.err)."""

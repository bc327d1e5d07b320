"""Python analysis. Importing the package registers every matcher kind its modules define."""

from portcheck.pyscan import flow  # noqa: F401  (registers the flow matcher kinds)

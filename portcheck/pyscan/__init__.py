"""Python analysis. Importing the package registers every matcher kind its modules define."""

from portcheck.pyscan import flow, keywords  # noqa: F401  (register the flow and keyword matcher kinds)

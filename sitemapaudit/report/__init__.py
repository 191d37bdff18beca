"""The report: record types (the public JSON Lines contract), the summary and the writer."""

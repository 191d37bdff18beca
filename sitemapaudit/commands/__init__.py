"""Project commands for ``scrapy`` (registered through ``COMMANDS_MODULE``)."""

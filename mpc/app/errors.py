"""Errors caused by the user's input; the CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input (config, command line, environment) with a message fit for one line."""

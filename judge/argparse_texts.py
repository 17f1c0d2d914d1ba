"""argparse's own words ("usage:", "error:", "the following arguments are required"), in the catalogue so that
``judge.i18n.set_language`` can hand argparse a translation of them (argparse looks them up with ``_``).

The message ids are argparse's, exactly as Python 3.11 writes them; a Python that words one differently
shows that one in English, nothing breaks."""
from .i18n import N_

__all__ = ["ARGPARSE_TEXTS"]

ARGPARSE_TEXTS = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"), N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"), N_("one of the arguments %s is required"),
    N_("unrecognized arguments: %s"), N_("not allowed with argument %s"), N_("ignored explicit argument %r"),
    N_("expected one argument"), N_("expected at most one argument"), N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"), N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"), N_("can't open '%(filename)s': %(error)s"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)

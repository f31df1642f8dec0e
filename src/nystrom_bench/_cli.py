"""Command-line plumbing shared by ``nystrom-bench`` (:mod:`nystrom_bench.cli`) and ``nystrom-bench-data``
(:mod:`nystrom_bench.data.cli`), on click: a group whose subcommands are imported on first use, and
errors as one line with exit status 2.  Bottom layer: no imports from the package.

One more subcommand is one entry of a :class:`LazyGroup`'s ``lazy`` table,
``name: ("module:attribute", "one-line help")``; the group's ``--help`` lists it from that line
without importing the module.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys

import click

__all__ = ["UserError", "LazyGroup", "run", "module_exists"]

#: the exit status of bad input (a usage error, an unknown name, a missing file): click's and argparse's
USAGE_STATUS = 2


class UserError(click.ClickException):
    """Bad input or a state the user can fix: one line on stderr (``error: ...``), exit status 2."""

    exit_code = USAGE_STATUS

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", file=file or sys.stderr)


def _one_line(exc):
    """A click usage error as one line: the message and where the help is."""
    where = f"; see '{exc.ctx.command_path} --help'" if exc.ctx is not None else ""
    return f"error: {exc.format_message().rstrip('.')}{where}"


def run(command, args=None, prog_name=None, standalone=True, **extra):
    """Run a click ``command`` on ``args`` (default ``sys.argv[1:]``) with one-line errors: a usage error
    or a :class:`UserError` prints ``error: ...`` on stderr and gives exit status 2, never a traceback.
    ``standalone``: exit the interpreter with the status (a console script); else return it."""
    try:
        value = click.Command.main(command, args=args, prog_name=prog_name, standalone_mode=False, **extra)
        code = value if isinstance(value, int) else 0
    except click.exceptions.Exit as exc:  # --help, --version, ctx.exit(n)
        code = exc.exit_code
    except click.UsageError as exc:
        click.echo(_one_line(exc), err=True)
        code = USAGE_STATUS
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.Abort:  # Ctrl-C at a prompt
        click.echo("aborted", err=True)
        code = 1
    except BrokenPipeError:  # `... | head`: the reader went away; not an error
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's flush at exit
        code = 0
    if standalone:
        sys.exit(code)
    return code


def module_exists(dotted):
    """Whether module ``dotted`` can be imported, found without importing it or its parent packages
    (``importlib.util.find_spec`` imports the parents: ``nystrom_bench.data`` and numpy for ``--help``)."""
    top, *rest = dotted.split(".")
    spec = getattr(sys.modules.get(top), "__spec__", None) or importlib.util.find_spec(top)
    for part in rest:
        path = spec.submodule_search_locations if spec is not None else None
        if not path:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(path))
    return spec is not None


class LazyGroup(click.Group):
    """A click group with one-line errors (:func:`run`) whose subcommands named in ``lazy`` --
    ``{name: ("module:attribute", "one-line help")}`` -- are imported when first used.  ``--help``
    lists them from their help line; a subcommand whose module is not installed is left out of the
    list and, when called, says so in one line (exit status 2)."""

    def __init__(self, *args, lazy=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def _installed(self, name):
        return module_exists(self.lazy[name][0].partition(":")[0])

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *(n for n in self.lazy if self._installed(n))})

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None or cmd_name not in self.lazy:
            return cmd
        module, _, attr = self.lazy[cmd_name][0].partition(":")
        if not self._installed(cmd_name):
            raise UserError(f"'{cmd_name}' is not available in this installation (module {module} is missing)")
        cmd = getattr(importlib.import_module(module), attr)
        self.add_command(cmd, cmd_name)  # loaded once
        return cmd

    def format_commands(self, ctx, formatter):
        """The commands and their one-line help, without importing a lazy one."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(limit=formatter.width - 6 - len(name))))
            else:
                rows.append((name, self.lazy[name][1]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, args=None, prog_name=None, standalone_mode=True, **extra):
        return run(self, args, prog_name, standalone=standalone_mode, **extra)

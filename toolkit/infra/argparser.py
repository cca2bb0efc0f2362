"""The one command-line parser of the CM scripts: argparse that never echoes a rejected value.

A rejected argument may be a secret (an API key pasted into the wrong option), so the error line
names no value: the usage, then ``PROG: error: invalid or missing arguments``, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class QuietArgumentParser(argparse.ArgumentParser):
    """argparse that never echoes a rejected value and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: invalid or missing arguments\n")
        raise SystemExit(2)

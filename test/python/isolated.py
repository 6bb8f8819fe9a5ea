"""Run a snippet in a child Python process, so a crash (signal, abort) fails one test, not the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        lines = self.stdout.strip().splitlines()
        return lines[-1] if lines else ""


def run_isolated(code: str, *, timeout: float = 300, env: dict[str, str] | None = None) -> Outcome:
    """Run ``code`` (dedented) in a fresh interpreter; fail on any signal or hang, return its outcome.

    The child sees this checkout first on ``sys.path``. Print what the test should check; an uncaught
    exception gives a non-zero return code and its traceback in ``stderr``.
    """
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = str(ROOT) + os.pathsep + child_env.get("PYTHONPATH", "")
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"child process hung for {timeout} s:\n{exc.stderr}") from None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        raise AssertionError(f"child process died of {name}:\n{done.stderr[-4000:]}")
    return Outcome(done.returncode, done.stdout, done.stderr)


def expect_error(code: str, error: str, match: str = "", **kwargs) -> str:
    """Run ``code`` in a child; it must raise ``relax_mlir.errors.<error>`` whose message contains ``match``.

    Returns the message. Any other exception type, a crash, or no exception fails.
    """
    wrapped = (
        "import relax_mlir.errors as _errors\n"
        "try:\n" + textwrap.indent(textwrap.dedent(code), "    ") + "\n"
        "except _errors.RelaxError as _exc:\n"
        "    print('RAISED', type(_exc).__name__, str(_exc).replace('\\n', ' '))\n"
        "else:\n"
        "    print('NO ERROR')\n"
    )
    outcome = run_isolated(wrapped, **kwargs)
    assert outcome.returncode == 0, f"unexpected exception:\n{outcome.stderr[-4000:]}"
    line = outcome.last_line
    assert line.startswith(f"RAISED {error} "), f"expected {error}, got: {line}\n{outcome.stderr[-2000:]}"
    message = line.split(" ", 2)[2]
    assert match in message, f"{match!r} not in {message!r}"
    return message

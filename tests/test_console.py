"""The console script: a signal in the moment Python imports the command line ends the run in
the command line's words, without a traceback."""

import subprocess
import sys

import pytest

#: A stand-in for a slow import: the signal lands while a module is being imported.
SLOW_IMPORT = """
import os, signal, sys, time, types
from bayesrank.console import quiet_until_started
quiet_until_started()
class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "slow_module":
            os.kill(os.getpid(), signal.{signal})
            time.sleep(5)
        return None
sys.meta_path.insert(0, Slow())
import slow_module
"""


@pytest.mark.parametrize(("name", "code", "word"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_signal_during_startup_ends_the_run_in_words(name, code, word):
    proc = subprocess.run([sys.executable, "-c", SLOW_IMPORT.replace("{signal}", name)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == code
    assert proc.stderr.strip() == f"bayesrank: {word}" and "Traceback" not in proc.stderr


def test_the_console_script_runs_the_command_line():
    proc = subprocess.run([sys.executable, "-m", "bayesrank.console", "datasets"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "arena-2024" in proc.stdout

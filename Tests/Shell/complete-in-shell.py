"""Types a command line into a real interactive shell and presses TAB: what the shell's own
completion machinery makes of mcumgr's generated completion script.

Usage: complete-in-shell.py SHELL SCRIPT LINE EXPECTED
  SHELL   bash or zsh (from PATH); fish completes without a terminal: `fish -c "complete -C LINE"`
  SCRIPT  the file `mcumgr --generate-completion-script SHELL` wrote
  LINE    the command line to complete, e.g. "mcumgr --conn udp://x image li"
  EXPECTED  what the completed line should show, e.g. "image list": the wait after the TAB ends
          when it appears (an event), or after a minute
Prints what the shell showed after the TAB (escape sequences removed) and exits 0; exits 2 when the
shell did not start or never ran the setup. Every wait is bounded.
"""
import os
import pty
import re
import select
import sys
import time

shell, script, line, expected = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
commands = {
    "bash": (["bash", "--norc", "--noprofile", "-i"], f"source {script}"),
    "zsh": (["zsh", "-f", "-i"], f"autoload -U compinit; compinit -u; source {script}"),
}
argv, setup = commands[shell]

pid, fd = pty.fork()
if pid == 0:
    os.environ.update({"TERM": "dumb", "PS1": "$ ", "PROMPT": "$ ", "HOME": os.environ.get("TMPDIR", "/tmp")})
    os.execvp(argv[0], argv)


def read(until, seconds):
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if until in clean(out):
            break
    return out


def clean(raw):
    text = raw.decode(errors="replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|[\x07\r]", "", text)


os.write(fd, f"{setup}; echo READY-$((6*7))\n".encode())
if "READY-42" not in clean(read(until="READY-42", seconds=60)):
    print("the shell never ran the setup", file=sys.stderr)
    sys.exit(2)
os.write(fd, line.encode() + b"\t")
shown = read(until=expected, seconds=60)
os.write(fd, b"\x03")
os.write(fd, b"exit\n")
print(clean(shown))

#!/usr/bin/env python3
"""`crowdblend serve` option checks that need no server: --help's usage line names every option
that takes part in a run's shape (--gait CLIP with --trajectories and --pack), --help lists every
option of docs/serve.md's table and the table every option of --help, --gait without
--trajectories or --pack is refused with exit 2 before anything listens, and a short run's
summary has its tick rate. Prints TAP. Usage: test_cli_serve.py DOC [WRAPPER...] CMD"""
import json
import re
import subprocess
import sys

from tap import case, finish

DOC = sys.argv[1]
CMD = sys.argv[2:]


def serve(*args):
    return subprocess.run(CMD + ["serve"] + list(args), capture_output=True, text=True,
                          timeout=60)


def doc_options():
    """The options of docs/serve.md's table: its rows start with | `--name ..."""
    with open(DOC, encoding="utf-8") as f:
        names = re.findall(r"^\| `--([a-z-]+)", f.read(), re.MULTILINE)
    assert len(names) >= 10, "docs/serve.md's option table not found (%r)" % names
    return names


@case("--help's usage line names --trajectories FILE with --max-turn R and --gait CLIP")
def _():
    p = serve("--help")
    assert p.returncode == 0, "exit %d (%r)" % (p.returncode, p.stderr[-300:])
    usage = p.stdout.splitlines()[0]
    assert usage.startswith("usage: crowdblend serve"), usage
    for words in ("--trajectories FILE", "--max-turn R", "--gait CLIP", "--pack FILE"):
        assert words in usage, "usage line %r lacks %r" % (usage, words)


@case("--help lists every option of docs/serve.md's table")
def _():
    listed = set(re.findall(r"^  --([a-z-]+)", serve("--help").stdout, re.MULTILINE))
    missing = [n for n in doc_options() if n not in listed]
    assert not missing, "documented but not in --help: %r" % missing


@case("every option of --help is in docs/serve.md's table")
def _():
    listed = set(re.findall(r"^  --([a-z-]+)", serve("--help").stdout, re.MULTILINE))
    undocumented = sorted(listed - set(doc_options()) - {"help"})
    assert not undocumented, "in --help but not in docs/serve.md's table: %r" % undocumented


@case("--gait without --trajectories or --pack: exit 2, a message, nothing listens")
def _():
    for args in (["--gait", "Walk"], ["--trajectories", "x.csv", "--gait", "Walk"],
                 ["--pack", "x.cbpack", "--gait", "Walk"]):
        p = serve("--listen", "127.0.0.1:0", "--seconds", "1", *args)
        assert p.returncode == 2, "%r: exit %d, want 2" % (args, p.returncode)
        assert "it needs --trajectories and --pack" in p.stderr, "%r: %r" % (args, p.stderr)
        assert "listening" not in p.stdout, "%r: it listened" % args


@case("--listen takes HOST:PORT with a port of digits only: others exit 2 before listening")
def _():
    for listen in ("127.0.0.1: 80", "127.0.0.1:+80", "127.0.0.1:0x50", "127.0.0.1:80 ",
                   "127.0.0.1:-1", "127.0.0.1:65536", "127.0.0.1:", ":80", "127.0.0.1",
                   "127.0.0.1:000080"):
        p = serve("--listen", listen, "--seconds", "1")
        assert p.returncode == 2, "%r: exit %d, want 2" % (listen, p.returncode)
        assert "--listen wants HOST:PORT" in p.stderr, "%r: %r" % (listen, p.stderr)
        assert "listening" not in p.stdout, "%r: it listened" % listen



@case("a run shorter than the stats' second still reports its tick rate in the summary")
def _():
    p = serve("--listen", "127.0.0.1:0", "--seconds", "0.5")
    assert p.returncode == 0, "exit %d (%r)" % (p.returncode, p.stderr[-300:])
    summary = json.loads([ln for ln in p.stdout.splitlines() if '"summary"' in ln][-1])
    ticks, hz = summary["ticks"], summary["tick_hz"]
    assert ticks > 0, summary
    # The run lasts at least its simulated half second, so the rate is at most ticks / 0.5
    # (and the simulation ticks at 60 Hz, so the ticks are at most about 30).
    assert 0 < hz <= ticks / 0.5 * 1.0001, summary
    assert ticks <= 31, summary


finish()

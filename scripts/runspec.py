"""A run of the crowdblend command as scripts/bench_compare.py and tests/checksums.py take it:
"LABEL=[env NAME=VALUE ...] COMMAND [ARGS...]", split like a shell would."""
import os
import shlex


def split_run(spec):
    """"label=env A=B cmd ..." -> (label, argv, environment)."""
    label, _, command = spec.partition("=")
    argv = shlex.split(command)
    env = dict(os.environ)
    if argv and argv[0] == "env":
        argv.pop(0)
        while argv and "=" in argv[0]:
            k, _, v = argv.pop(0).partition("=")
            env[k] = v
    return label, argv, env

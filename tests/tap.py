"""TAP for the Python tests: @case("name") runs a function as one case (an AssertionError or
any other exception fails it), finish() prints the plan and the results and exits."""
import sys

_results = []


def case(name):
    def wrap(fn):
        try:
            fn()
            _results.append((True, name, ""))
        except AssertionError as e:
            _results.append((False, name, str(e)))
        except Exception as e:  # a crash of the test itself counts as a failure
            _results.append((False, name, "%s: %s" % (type(e).__name__, e)))
        return fn
    return wrap


def finish():
    print("TAP version 13")
    print("1..%d" % len(_results))
    for i, (ok, name, why) in enumerate(_results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok:
            for line in why.splitlines():
                print("# " + line)
    sys.exit(0 if all(ok for ok, _, _ in _results) else 1)

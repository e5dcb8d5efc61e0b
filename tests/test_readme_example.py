#!/usr/bin/env python3
"""The README's crowd example is the checked loop of examples/quickstart.c, verbatim (the
program itself is built and run as the test 'example_quickstart'). Prints TAP."""
import sys
import textwrap

readme_path, example_path = sys.argv[1], sys.argv[2]
source = open(example_path, encoding="utf-8").read()
begin = source.index("/* ---- README snippet: from here ---- */\n")
end = source.index("    /* ---- README snippet: to here ---- */")
snippet = textwrap.dedent(source[source.index("\n", begin) + 1:end]).strip("\n")
readme = open(readme_path, encoding="utf-8").read()
print("1..1")
if snippet in readme:
    print("ok 1 - README shows the checked loop of examples/quickstart.c verbatim")
else:
    print("not ok 1 - README's example differs from examples/quickstart.c; it should read:")
    print("\n".join("# " + line for line in snippet.splitlines()))
    sys.exit(1)

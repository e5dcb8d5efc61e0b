#!/bin/sh
# The README's main command: installs what is missing, builds crowdblend with the default
# options (release, every kernel set of the architecture, the widest this CPU runs chosen at
# start-up) and runs the main job.
set -eu
cd "$(dirname "$0")/.."

if [ "${CB_SKIP_SETUP:-0}" != 1 ]; then
    if [ "$(id -u)" -eq 0 ]; then scripts/setup.sh; else sudo scripts/setup.sh; fi
fi

dir=build/demo
if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dtests=disabled -Dbench=disabled >/dev/null
fi
meson compile -C "$dir" >/dev/null

cb="$dir/src/cli/crowdblend"
"$cb" info
echo
# The crowd demo: 10,000 characters wandering for 10 simulated seconds at 60 Hz on every core.
if [ "${CB_DEMO_QUICK:-0}" = 1 ]; then
    "$cb" demo --characters 500 --seconds 1
else
    "$cb" demo
fi

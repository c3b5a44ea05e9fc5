#!/bin/sh
# demo.sh - the main job on embedded defaults (filled in as capabilities land).
set -eu
"$1" version

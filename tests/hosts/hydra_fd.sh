#!/bin/sh
exec "$(dirname "$0")/launchers.sh" hydra

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Gives the build directory back to the user who ran sudo, so that `make` as that user
# still works after `sudo make demo` or `sudo make test`. Usage: own-build.sh DIR
set -u
dir=${1:?usage: own-build.sh DIR}
[ "$(id -u)" -eq 0 ] && [ -d "$dir" ] || exit 0
case ${SUDO_UID:-} in '' | *[!0-9]*) exit 0 ;; esac
case ${SUDO_GID:-} in '' | *[!0-9]*) exit 0 ;; esac
[ "$SUDO_UID" -ne 0 ] || exit 0
# -R does not follow symbolic links (-P): only what is in the directory changes owner
chown -R -P "$SUDO_UID:$SUDO_GID" "$dir"

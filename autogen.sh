#!/bin/sh
# Generates configure and Makefile.in for the out-of-tree build.
# (Inside an Open MPI source tree, Open MPI's own autogen.pl is used instead.)
set -e
cd "$(dirname "$0")"
mkdir -p config/aux
exec autoreconf --install --force -I config

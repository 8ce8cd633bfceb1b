#!/usr/bin/env bash
# Installs every Debian package the build and the tests need (bookworm, as
# root). Safe to run again: apt-get skips what is installed. One line per
# feature, so it is clear why each package is here.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y --no-install-recommends "$@"; }

apt-get update -qq
# Build: compiler, collectd headers, cnats, json-c.
apt_install build-essential pkg-config collectd-core collectd-dev \
  libnats-dev libjson-c-dev
# Integration tests: a real nats-server, collectd, and shell tools.
apt_install nats-server python3 curl procps

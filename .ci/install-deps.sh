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
# Backend tests (test_graphite, test_influxdb, test_prometheus,
# test_exec_handler): carbon-cache and the whisper tools, InfluxDB 1.x,
# Prometheus and promtool, ss (iproute2), flock (util-linux), and the
# libraries of collectd's write_prometheus and network plugins (collectd-core
# only suggests them).
apt_install graphite-carbon python3-whisper influxdb prometheus iproute2 \
  util-linux libmicrohttpd12 libprotobuf-c1 libgcrypt20
# Health events, REST API and dashboard (test_events, test_http): the HTTP
# server library (the header to build; the plugin opens libmicrohttpd.so.12
# from libmicrohttpd12 at run time when an instance sets Listen), xxd to
# embed the dashboard page in the plugin, and headless Chromium to load the
# page in the dashboard test. test_http also builds an empty stand-in
# library with cc (build-essential, above).
apt_install libmicrohttpd-dev libmicrohttpd12 xxd chromium
# The listener's TLS and users (test_http_tls): libcrypt's headers for
# bcrypt (crypt_r), Python's bcrypt to make the test's password hashes, and
# certutil (libnss3-tools) to make Chromium trust the test CA.
apt_install libcrypt-dev python3-bcrypt libnss3-tools
# nats-lens-check test (test_check): python3 validates the JSON reports,
# script (bsdutils) gives the check a terminal for the colour test.
apt_install python3 bsdutils
# Evaluation harness (make eval): the Go injector (nats.go), the JavaScript
# injector (npm; a NodeSource nodejs brings its own npm, Debian's needs the
# npm package), and gnuplot for the latency plot.
apt_install golang-go golang-github-nats-io-go-nats-dev gnuplot-nox \
  $(command -v npm >/dev/null || echo nodejs npm)
# NKey seeds in the plugin: Ed25519 from OpenSSL's libcrypto (headers).
apt_install libssl-dev
# Reliability tests: fuzzing (clang, libFuzzer runtime), valgrind, and keys,
# certificates and JWTs for the authentication tests (openssl, Go with the
# packaged nkeys and jwt libraries, built by tests/tools/nl_keygen.go).
apt_install clang libclang-rt-14-dev valgrind openssl golang-go \
  golang-github-nats-io-nkeys-dev golang-github-nats-io-jwt-dev \
  golang-golang-x-crypto-dev
# Debian package (make deb) and its install test: dpkg-shlibdeps and
# dpkg-parsechangelog, lintian, help2man for the check command's manual page,
# and man (man-db) to read that page back.
apt_install dpkg-dev lintian help2man man-db

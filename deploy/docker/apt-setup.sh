#!/bin/sh
# apt-setup.sh MIRROR [SECURITY_MIRROR]: points apt at one Debian mirror (the
# image must use the mirror the build host reaches, which is not always
# deb.debian.org), turns off recommends and caches, and runs apt-get update.
# Runs inside the image build (Dockerfile), as root, on any Debian base:
# debootstrap's (sources.list) or the registry's debian:*-slim
# (sources.list.d/debian.sources). An empty SECURITY_MIRROR leaves security
# updates out.
set -eu
mirror=${1:?usage: apt-setup.sh MIRROR [SECURITY_MIRROR]}
security=${2:-}
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}

rm -f /etc/apt/sources.list.d/debian.sources
{
  echo "deb $mirror $suite main"
  echo "deb $mirror $suite-updates main"
  [ -n "$security" ] && echo "deb $security $suite-security main"
} >/etc/apt/sources.list

cat >/etc/apt/apt.conf.d/90cairn <<'CONF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Retries "3";
Dpkg::Use-Pty "false";
CONF
# no .deb cache in the layers
echo 'Binary::apt::APT::Keep-Downloaded-Packages "false";' >/etc/apt/apt.conf.d/91cairn-nocache
apt-get update -qq

#!/usr/bin/env bash
# The tests' name for the boot script perfgate itself uses to boot a kernel
# (gate/target/boot-vm.sh, installed as libexec/perfgate/pg-boot-vm): see
# the comment at its top for the options.
exec bash "$(dirname "$0")/../../gate/target/boot-vm.sh" "$@"

#!/usr/bin/env bash
# A noisy neighbour for the gate's rate measurements: bursts of CPU and
# memory work on one core (CPU 0), 0.1-0.5 s each, separated by 0.2-1.0 s of
# quiet, until killed. A burst spins a shell loop and streams 256 MiB through
# a process that holds it all (tail on newline-free input).
#
#   bench/noisy_neighbour.sh &  ...  kill %1
set -u
trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM INT
while :; do
  sleep "0.$((2 + RANDOM % 9))"
  burst="0.$((1 + RANDOM % 5))"
  timeout "$burst" taskset -c 0 sh -c 'while :; do :; done' &
  timeout "$burst" sh -c 'head -c 256M /dev/zero | taskset -c 0 tail >/dev/null' &
  wait
done

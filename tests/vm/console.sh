# What passes between the host and a guest of tests/vm/run.sh over the
# guest's serial console, its only channel: files and questions out as
# marker lines in run.sh's output, answers in through run.sh --console-in.
# Sourced by the host's scripts (bash) and by the guest's (busybox sh), so
# both sides read and write the same markers.
#
# A file, out of the guest: the guest's console_send NAME FILE prints it in
# base64 (the console carries text) between two marker lines, and the host's
# console_receive NAME LOG OUT decodes it from run.sh's output.
#
# A question, answered by the host while the guest waits: the guest's
# console_ask REQUEST prints a marker line and returns the one line the host
# writes back, from /dev/console; the host's console_serve answers each
# request run.sh's output shows, once, in order, until the guest is gone.

# Guest side.
console_send() {
  echo "console-begin $1"
  base64 "$2"
  echo "console-end $1"
}

console_ask() {
  # The answer is not echoed into the console's output, where the host
  # reads; the question goes there whatever the caller does with stdout.
  stty -echo < /dev/console 2> /dev/null || true
  echo "console-ask $* ." > /dev/console
  read -r console_answer < /dev/console
  echo "$console_answer"
}

# Host side.
console_receive() {
  tr -d '\r' < "$2" | sed -n "/^console-begin $1\$/,/^console-end $1\$/p" | sed '1d;$d' | base64 -d > "$3"
}

# console_serve LOG FIFO PID HANDLER: while PID runs, calls HANDLER REQUEST
# for every request of LOG (run.sh's output so far) not yet answered and
# writes its one line of output to FIFO (run.sh --console-in). The " ." that
# ends a request's line tells it from a line still being written. (POSIX sh:
# the guest's busybox parses this file too.)
console_serve() {
  local log="$1" fifo="$2" pid="$3" handler="$4" answered=0 request n
  while kill -0 "$pid" 2> /dev/null; do
    tr -d '\r' < "$log" | sed -n 's/^console-ask \(.*\) \.$/\1/p' > "$fifo.requests"
    n=0
    while IFS= read -r request; do
      n=$((n + 1))
      [ "$n" -gt "$answered" ] || continue
      "$handler" "$request" | head -n 1 > "$fifo"
      answered=$n
    done < "$fifo.requests"
    sleep 0.5
  done
  rm -f "$fifo.requests"
}

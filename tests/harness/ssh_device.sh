# Keys and configurations for a test's own ssh device (sourced by
# tests/e2e/target_ssh_test.sh and tests/vm/device-ssh-test.sh).

# A TCP port of the loopback that nothing listens on now.
ssh_device_free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

#
# ssh_device_keys DIR PORT LISTEN: in DIR, a host key and a client key, the
# client's public key as authorized_keys, an sshd_config for root by key
# only on LISTEN:PORT whose files are in DIR, and an ssh_config that gives
# the client key to ssh (perfgate's --ssh-config). The server drops a
# session whose client stopped answering for 15 s, as the client drops a
# server (perfgate's ssh options), so a cut link ends the run on both sides.
# Sessions cache perfgate's binary in DIR/cache, not in root's home.
ssh_device_keys() {
  local dir="$1" port="$2" listen="$3"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
  cp "$dir/client_key.pub" "$dir/authorized_keys"
  cat > "$dir/sshd_config" << CONF
Port $port
ListenAddress $listen
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
ClientAliveInterval 5
ClientAliveCountMax 3
SetEnv XDG_CACHE_HOME=$dir/cache
PidFile $dir/sshd.pid
CONF
  cat > "$dir/ssh_config" << CONF
Host *
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
CONF
}

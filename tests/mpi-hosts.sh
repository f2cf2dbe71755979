#!/usr/bin/env bash
# tests/mpi-hosts.sh (tests/fleet.rs runs it) - launch an OpenMPI job (ssh launcher) across "hosts" that are
# Linux network namespaces on this one machine, then tear everything down.
#
#   launcher  h0  10.77.0.1  (netns nmpi-h0, own UTS ns, private /etc/hosts)
#   rank host h1  10.77.0.2  (netns nmpi-h1, sshd in own UTS ns -> hostname h1)
#   rank host h2  10.77.0.3  (netns nmpi-h2, sshd in own UTS ns -> hostname h2)
#   switch        br0 inside netns nmpi-sw (no IP; root ns is not connected)
#
# Usage:  sudo tests/mpi-hosts.sh            # setup, verify, run iogauge, teardown
#         KEEP=1 tests/mpi-hosts.sh          # keep everything up (no teardown) for debugging;
#                                  # clean up later with: tests/mpi-hosts.sh teardown
# Env:    IOGAUGE=/tmp/iogauge-mpi  NHOSTS=2 (1..3 rank hosts)
#         IOGAUGE_ARGS="--size 8m --time 2s --no-store"
#         RESULT=/tmp/netns-mpi/last-run.txt  (survives teardown)
#         MPI_TIMEOUT=120  (per mpirun invocation)
# Needs:  root, iproute2, util-linux (unshare), openssh-server+client, OpenMPI.
# Exit 3: sshd is missing (the test says so and skips, or fails under CI=true).
set -euo pipefail

BASE=${BASE:-/tmp/netns-mpi}
RT=$BASE/rt                      # everything throwaway lives here; removed on exit
P=nmpi                           # prefix for netns names
SUBNET=10.77.0
NHOSTS=${NHOSTS:-2}
IOGAUGE=${IOGAUGE:-/tmp/iogauge-mpi}
IOGAUGE_ARGS=${IOGAUGE_ARGS:---size 8m --time 2s --no-store}
RESULT=${RESULT:-$BASE/last-run.txt}
MPI_TIMEOUT=${MPI_TIMEOUT:-120}  # seconds; a hung mpirun is killed, then teardown runs
DATA=$BASE/data                  # iogauge targets DATA/{host}; removed on exit
SSHD=/usr/sbin/sshd              # sshd re-execs itself: must be an absolute path
HOSTS=(h0); for ((i = 1; i <= NHOSTS; i++)); do HOSTS+=("h$i"); done

# log to a saved copy of stderr: a trap can fire inside a redirected command
# (e.g. "in_h0 ... 2>/dev/null"), and teardown's messages must not vanish with it
exec 3>&2
log() { printf '[%6.2fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{print a-b}')" "$*" >&3; }
T0=$(date +%s.%N)

teardown() {
    local rc=$?
    set +e
    log "teardown (exit status $rc)"
    for pidf in "$RT"/*/sshd.pid; do
        [[ -f $pidf ]] || continue
        pid=$(cat "$pidf")
        # only kill it if it really is our sshd (pid reuse paranoia)
        if [[ -n $pid ]] && grep -qs -- "$RT/" "/proc/$pid/cmdline"; then
            kill "$pid"
            # wait until it is gone or a zombie (PID 1 here reaps orphans lazily)
            for _ in $(seq 30); do
                st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || break
                [[ $st == Z ]] && break; sleep 0.1
            done
        fi
    done
    # any leftover process inside our namespaces (e.g. stray orted / ranks)
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P-"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
    done
    sleep 0.3
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P-"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns"          # veths + bridge live only in these netns -> gone too
    done
    [[ -f $RT/.created-run-sshd ]] && rmdir /run/sshd 2>/dev/null
    rm -rf "$RT" "$DATA" "$RESULT.tmp"
    log "teardown done"
    exit $rc
}

if [[ ${1:-} == teardown ]]; then trap - EXIT; teardown; fi
[[ $EUID -eq 0 ]] || { echo "must run as root" >&2; exit 1; }
# one instance at a time (names, subnet and dirs are fixed); the leftover cleanup
# below would otherwise destroy a concurrently running instance
mkdir -p "$BASE"; exec 9>"$BASE/.lock"
flock -n 9 || { echo "another mpi-hosts.sh is active (lock $BASE/.lock)" >&2; exit 1; }
for c in ip unshare ssh ssh-keygen mpirun awk flock timeout; do
    command -v "$c" >/dev/null || { echo "missing: $c" >&2; exit 1; }
done
[[ -x $IOGAUGE ]] || { echo "missing iogauge binary $IOGAUGE" >&2; exit 1; }

# sshd comes from openssh-server (.ci/run installs it without starting its service).
[[ -x $SSHD ]] || { echo "missing $SSHD: apt-get install openssh-server" >&2; exit 3; }

# leftovers of an earlier crashed run?  (teardown in a subshell so we don't exit)
if ip netns list | grep -q "^$P-" || [[ -d $RT ]]; then
    log "cleaning leftovers from a previous run"; (trap - EXIT; teardown) || true
fi
trap teardown EXIT
trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP

mkdir -p "$RT"; chmod 700 "$RT"
if [[ ! -d /run/sshd ]]; then          # Debian sshd's compiled-in privsep dir
    mkdir -p /run/sshd; chmod 755 /run/sshd; touch "$RT/.created-run-sshd"
fi

# ---------------------------------------------------------------- network
log "creating namespaces + bridge"
ip netns add "$P-sw"
ip -n "$P-sw" link set lo up
ip -n "$P-sw" link add br0 type bridge forward_delay 0 stp_state 0
ip -n "$P-sw" link set br0 up
i=0
for h in "${HOSTS[@]}"; do
    ns=$P-$h; addr=$SUBNET.$((i + 1))
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$ns" link set lo up
    # veth: "eth0" in the host ns, "p-$h" as a bridge port in the switch ns
    ip link add "$P-t$i" netns "$ns" type veth peer name "p-$h" netns "$P-sw"
    ip -n "$ns" link set "$P-t$i" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$P-sw" link set "p-$h" master br0 up
    echo "$addr $h" >>"$RT/hosts"
    i=$((i + 1))
done
printf '127.0.0.1 localhost\n' >>"$RT/hosts"

# ---------------------------------------------------------------- ssh keys/config
log "generating throwaway keys and configs"
ssh-keygen -q -t ed25519 -N '' -C nmpi-user -f "$RT/id_ed25519"
cp "$RT/id_ed25519.pub" "$RT/authorized_keys"
{
    for ((i = 1; i <= NHOSTS; i++)); do
        printf 'Host h%d\n  HostName %s.%d\n' "$i" "$SUBNET" $((i + 1))
    done
    cat <<EOF
Host *
  User root
  IdentityFile $RT/id_ed25519
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
} >"$RT/ssh_config"
SSH=(ssh -F "$RT/ssh_config")

for ((i = 1; i <= NHOSTS; i++)); do
    h=h$i; d=$RT/$h; addr=$SUBNET.$((i + 1)); mkdir -p "$d"
    ssh-keygen -q -t ed25519 -N '' -C "nmpi-$h" -f "$d/host_key"
    cat >"$d/sshd_config" <<EOF
ListenAddress $addr:22
HostKey $d/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $RT/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
LogLevel INFO
EOF
    "$SSHD" -t -f "$d/sshd_config"
    # own UTS ns => 'hostname' seen by sshd and every child (orted, MPI ranks)
    ip netns exec "$P-$h" unshare --uts sh -c \
        "hostname $h && exec $SSHD -f '$d/sshd_config' -E '$d/sshd.log'" 3>&- 9>&-
done

# launcher wrapper: netns h0 + own UTS (hostname h0) + own mount ns (private /etc/hosts)
in_h0() {
    ip netns exec "$P-h0" unshare --uts --mount sh -c \
        'hostname h0 && mount --bind "$0" /etc/hosts && exec "$@"' "$RT/hosts" "$@"
}

log "waiting for sshds"
for ((i = 1; i <= NHOSTS; i++)); do
    for try in $(seq 50); do
        in_h0 "${SSH[@]}" "h$i" true 2>/dev/null && break
        [[ $try == 50 ]] && { echo "sshd on h$i not reachable:" >&2; cat "$RT/h$i/sshd.log" >&2; exit 1; }
        sleep 0.1
    done
done
log "setup complete"

# ---------------------------------------------------------------- verification
log "check: ssh by IP / by name from h0"
for ((i = 1; i <= NHOSTS; i++)); do
    got=$(in_h0 "${SSH[@]}" "$SUBNET.$((i + 1))" hostname)
    echo "ssh $SUBNET.$((i + 1)) hostname -> $got"
    [[ $got == "h$i" ]] || { echo "expected h$i" >&2; exit 1; }
done
log "check: isolation (root ns must not reach $SUBNET.2)"
if ping -c1 -W1 "$SUBNET.2" >/dev/null 2>&1; then echo "root ns can reach the test net?!" >&2; exit 1; fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RANKHOSTS=$(IFS=,; echo "${HOSTS[*]:1}")
# --foreground: mpirun stays in the terminal's process group (Ctrl-C reaches it)
MPIRUN=(timeout --foreground -k 5 "$MPI_TIMEOUT" mpirun --host "$RANKHOSTS" -n "$NHOSTS"
    --mca plm_rsh_agent "ssh -F $RT/ssh_config"
    --mca plm_rsh_no_tree_spawn 1
    --mca oob_tcp_if_include "$SUBNET.0/24"
    --mca btl self,tcp --mca btl_tcp_if_include "$SUBNET.0/24"
    --mca pml ob1)
# The test's own run directory reaches the ranks started over ssh.
[[ -n ${IOGAUGE_RUN_DIR:-} ]] && MPIRUN+=(-x IOGAUGE_RUN_DIR)

log "check: mpirun hostname"
out=$(in_h0 "${MPIRUN[@]}" hostname | sort)
echo "$out"
[[ $(sort -u <<<"$out" | wc -l) == "$NHOSTS" ]] || { echo "ranks did not report distinct hostnames" >&2; exit 1; }

log "running iogauge"
for h in "${HOSTS[@]:1}"; do mkdir -p "$DATA/$h"; done   # {host} expands per rank
# shellcheck disable=SC2086
in_h0 "${MPIRUN[@]}" "$IOGAUGE" run "$DATA/{host}" $IOGAUGE_ARGS | tee "$RESULT.tmp"
mv "$RESULT.tmp" "$RESULT"
log "iogauge done; output saved to $RESULT"

if [[ ${KEEP:-0} == 1 ]]; then
    trap - EXIT INT TERM HUP
    log "KEEP=1: leaving namespaces up. Launch with e.g.:"
    echo "  ip netns exec $P-h0 unshare --uts --mount sh -c 'hostname h0; mount --bind $RT/hosts /etc/hosts; exec bash'"
    echo "  cleanup: $0 teardown"
fi

# Sourced by test/debian13 and test/debian-unstable: a Debian root made once with
# debootstrap and cached, and the command that runs in it. What differs between the
# two is set by the caller before it sources this file:
#
#   dr_prog       the caller's name in messages (test/debian13)
#   dr_label      the release in messages (Debian 13)
#   dr_suite      debootstrap's suite (trixie, sid)
#   dr_root       the root's directory (the caller's environment override applied)
#   dr_mirror     the archive, where an environment variable names one (else empty:
#                 the mirror the host's apt uses for Debian)
#   dr_marker     VAR=VALUE the command in the root sees (COLL_ASYNC_IN_DEBIAN13=1)
#   dr_deb_src    1: the archive's source packages too (deb-src lines)
#   dr_apt_conf   lines for the root's /etc/apt/apt.conf.d/90coll-async (empty: none)
#   dr_packages   packages besides config/install-deps' list (array)
#
# and then calls dr_main "$@". Nothing on the host changes but the root, its log
# ($dr_root.log) and its lock ($dr_root.lock).
# shellcheck shell=bash

dr_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

dr_unavailable() {
    echo "$dr_prog: $*" >&2
    exit 77
}

# The mirror the host's apt uses for Debian (other releases are fetched from the
# same archive).
dr_mirror_url() {
    local m
    m=$(grep -rhoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list \
            /etc/apt/sources.list.d/ 2>/dev/null | grep -v -- '-security' | head -n 1 | tr -d ' ')
    echo "${dr_mirror:-${m:-http://deb.debian.org/debian}}"
}

# dr_in_root DIR COMMAND...: COMMAND chrooted into DIR in a mount namespace of its
# own, with /proc, /sys, /dev and /tmp bound from this machine and the repository at
# the same path as here; the mounts go away with the command.
dr_in_root() {
    local dir=$1
    shift
    unshare --mount --propagation private -- /bin/bash -c '
        set -e
        dir=$1 repo=$2 marker=$3
        shift 3
        for m in proc sys dev tmp; do mkdir -p "$dir/$m"; done
        # The root a mount of its own, so that / is a mount point inside (ip netns
        # makes / a slave mount).
        mount --bind "$dir" "$dir"
        mount --rbind /proc "$dir/proc"
        mount --rbind /sys "$dir/sys"
        mount --rbind /dev "$dir/dev"
        mount --bind /tmp "$dir/tmp"
        mkdir -p "$dir$repo"
        mount --bind "$repo" "$dir$repo"
        # The repository may be a git worktree whose .git points elsewhere.
        common=$(git -C "$repo" rev-parse --git-common-dir 2>/dev/null || true)
        if [ -n "$common" ] && [ -d "$common" ]; then
            common=$(cd "$repo" && cd "$common" && pwd)
            case $common in "$repo"/*) ;; *)
                mkdir -p "$dir$common" && mount --bind "$common" "$dir$common" ;;
            esac
        fi
        cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
        cd_to=$PWD
        exec chroot "$dir" /usr/bin/env -u LD_LIBRARY_PATH "$marker" \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /bin/bash -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$cd_to" "$@"
    ' in-root "$dir" "$dr_repo" "$dr_marker" "$@"
}

dr_make_root() {
    local tmp=$dr_root.new
    if [ ! -x "$dr_root/usr/bin/apt-get" ]; then
        # A fresh machine has no debootstrap; it comes from the host's own archive.
        command -v debootstrap >/dev/null ||
            "$dr_repo/config/install-deps" --only debootstrap >&2 ||
            dr_unavailable "debootstrap not found and not installable (apt-get install debootstrap)"
        mkdir -p "$(dirname "$dr_root")" || dr_unavailable "cannot create $(dirname "$dr_root")"
        rm -rf "$tmp"
        echo "$dr_prog: making a $dr_label root in $dr_root from $(dr_mirror_url) (minutes, once)" >&2
        if ! debootstrap --variant=minbase "$dr_suite" "$tmp" "$(dr_mirror_url)" \
                >"$dr_root.log" 2>&1; then
            tail -n 5 "$dr_root.log" >&2
            rm -rf "$tmp"
            dr_unavailable "debootstrap $dr_suite failed (log: $dr_root.log)"
        fi
        if [ "$dr_deb_src" -eq 1 ]; then
            # The archive's source packages (test/intree-build's Open MPI tree).
            sed -n 's/^deb /deb-src /p' "$tmp/etc/apt/sources.list" \
                >"$tmp/etc/apt/sources.list.d/src.list"
        fi
        mv "$tmp" "$dr_root"
    fi
    # The root's own apt settings (the host's are not touched).
    if [ -n "$dr_apt_conf" ]; then
        printf '%s\n' "$dr_apt_conf" >"$dr_root/etc/apt/apt.conf.d/90coll-async"
    fi
    # What a Debian system has and debootstrap leaves out (test/netns mounts over it).
    [ -e "$dr_root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$dr_root/etc/hosts"
    # Whatever config/install-deps asks for now (it knows every release's names),
    # plus the caller's.
    if ! dr_in_root "$dr_root" "$dr_repo/config/install-deps" "${dr_packages[@]}" >&2; then
        dr_unavailable "installing the packages into $dr_root failed"
    fi
}

# dr_main ARGS...: the callers' interface (their header says it).
dr_main() {
    local make=0
    while [ $# -gt 0 ]; do
        case $1 in
            --root) dr_root=$2; shift 2 ;;
            --make) make=1; shift ;;
            --) shift; break ;;
            -h|--help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
            *) break ;;
        esac
    done
    [ "$(id -u)" -eq 0 ] || dr_unavailable "needs root (debootstrap, chroot, mounts)"
    command -v unshare >/dev/null || dr_unavailable "unshare (util-linux) not found"

    mkdir -p "$(dirname "$dr_root")" 2>/dev/null && touch "$dr_root.lock" 2>/dev/null ||
        dr_unavailable "cannot write $dr_root.lock"
    exec 9>"$dr_root.lock"
    flock 9
    if [ "$make" -eq 1 ]; then
        dr_make_root
        exit 0
    fi
    flock -u 9
    [ -x "$dr_root/usr/bin/mpicc" ] ||
        dr_unavailable "no $dr_label root in $dr_root ($dr_prog --make)"
    [ $# -gt 0 ] || set -- bash
    dr_in_root "$dr_root" "$@"
}

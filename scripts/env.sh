# Source me: `source scripts/env.sh` puts the pinned Node 22 and pnpm first on PATH
# (provisioning them into ./.tools on first use). See scripts/provision.sh.
__am_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
eval "$("$__am_root/scripts/provision.sh")"
unset __am_root

#!/usr/bin/env bash
# Real ACL exports written by Samba, for tests/fixtures/acl/samba-* (tests/fixtures/acl/README.md).
#
# Runs a private smbd in a network namespace of its own (`unshare --net`: its loopback is not the
# machine's; smbcacls has no option for a port other than 445), with its own smb.conf, passdb, lock
# and state folders in a temporary folder, and a share whose NT ACLs `vfs objects = acl_xattr` keeps
# in the security.NTACL xattr. It builds a small Japanese share over SMB with smbclient (everything
# inherits from the share's root as Samba does it), sets the ACLs top down with smbcacls (--set,
# --add, --delete, --inherit, --propagate-inheritance), then exports them with the real tools:
#   samba-listing.txt          `echo PATH; smbcacls //127.0.0.1/share PATH` per path (the listing)
#   samba-listing-numeric.txt  the same with --numeric (SIDs, numbers)
#   samba-sddl.txt             the same with --sddl (the security descriptor in SDDL)
#   samba-ntacl-sddl.txt       `echo PATH; samba-tool ntacl get PATH --as-sddl` on the NAS itself
#   samba-save.txt             `smbcacls //127.0.0.1/share / --recurse --save FILE`: the icacls /save
#                              format (smbcacls versions whose --help lists --save: Samba 4.22 from
#                              bookworm-backports; Debian 12's own 4.17 has none)
#   samba-*-changed.txt        the same after one folder's ACL changed (人事部/評価: 監査 may read)
#   samba-version.txt          `smbd --version`
# The readers each ACL gives are written by hand in tests/unit/test_acl_samba.py, from the ACLs set
# below, not from these files.
#
# Needs root (smbd, the security.* xattrs, Unix accounts for the SMB user and the NAS's groups,
# which it creates once: dxacl_admin, dxacl_sales, dxacl_hr, dxacl_audit) and Debian's samba and
# smbclient. Not run by CI: the tests read the committed files.
# Usage: sudo scripts/make_samba_acl_fixtures.sh [OUTPUT_FOLDER]   (default tests/fixtures/acl)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-tests/fixtures/acl}")"
mkdir -p "$out"

for tool in smbd smbcacls smbclient smbpasswd net samba-tool unshare ip; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install samba smbclient attr)" >&2; exit 2; }
done
[[ "$(id -u)" = 0 ]] || { echo "run as root (sudo): smbd and the security.NTACL xattrs need it" >&2; exit 2; }
if [[ -z "${DOCINDEX_SAMBA_NETNS:-}" ]]; then
  exec env DOCINDEX_SAMBA_NETNS=1 unshare --net "$0" "$out"
fi
ip link set lo up

port=445  # inside the namespace
nas=NAS01
# The NAS's own SID, fixed so that every run writes the same SIDs (a NAS has one of its own)
local_sid=S-1-5-21-3041914418-2917245436-1871946452
# A SID nobody resolves: an account of a domain the NAS left (the unmapped SID)
orphan=S-1-5-21-1993962763-492894223-1202660629-2117
work="$(mktemp -d /tmp/docindex-samba.XXXXXX)"
smbd_pid=""
cleanup() {
  if [[ -n "$smbd_pid" ]]; then kill "$smbd_pid" 2>/dev/null || true; wait "$smbd_pid" 2>/dev/null || true; fi
  sleep 0.5
  # smbd starts samba-dcerpcd (its RPC helpers) on demand; it outlives smbd unless told to stop
  for pidfile in "$work"/pid/*.pid; do
    [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  sleep 0.5
  if [[ -n "${KEEP:-}" ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

mkdir -p "$work"/{private,lock,state,cache,pid,log,ncalrpc,share}
chmod 755 "$work" "$work/share"
conf="$work/smb.conf"
cat >"$conf" <<EOF
[global]
  netbios name = $nas
  workgroup = DOCINDEX
  server role = standalone server
  smb ports = $port
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  private dir = $work/private
  lock directory = $work/lock
  state directory = $work/state
  cache directory = $work/cache
  pid directory = $work/pid
  ncalrpc dir = $work/ncalrpc
  log file = $work/log/%m.log
  passdb backend = tdbsam:$work/private/passdb.tdb
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
  unix charset = UTF-8
  server min protocol = SMB2_10
[share]
  path = $work/share
  read only = no
  vfs objects = acl_xattr
  acl_xattr:ignore system acls = yes
  admin users = dxacl_admin
  store dos attributes = yes
EOF

# Unix accounts the NAS maps its groups and its one user to (created once, kept: they own nothing)
for group in dxacl_sales dxacl_hr dxacl_audit; do getent group "$group" >/dev/null || groupadd --system "$group"; done
getent passwd dxacl_admin >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin dxacl_admin

net -s "$conf" setlocalsid "$local_sid" >/dev/null
net -s "$conf" setdomainsid "$local_sid" >/dev/null  # samba-tool ntacl reads this one
password="fixture-$(date +%s)-$RANDOM"
printf '%s\n%s\n' "$password" "$password" | smbpasswd -c "$conf" -s -a dxacl_admin >/dev/null
printf 'username = dxacl_admin\npassword = %s\ndomain = %s\n' "$password" "$nas" >"$work/auth.txt"
chmod 600 "$work/auth.txt"
net -s "$conf" groupmap add ntgroup=営業部 unixgroup=dxacl_sales type=domain rid=1105 >/dev/null
net -s "$conf" groupmap add ntgroup=人事部 unixgroup=dxacl_hr type=domain rid=1106 >/dev/null
net -s "$conf" groupmap add ntgroup=監査 unixgroup=dxacl_audit type=domain rid=1107 >/dev/null

setsid smbd --foreground --no-process-group --debug-stdout -s "$conf" >"$work/log/smbd.out" 2>&1 &
smbd_pid=$!
for _ in $(seq 50); do
  if smbclient -s "$conf" -A "$work/auth.txt" //127.0.0.1/share -c 'ls' >/dev/null 2>&1; then break; fi
  sleep 0.2
done

smb() { smbclient -s "$conf" -A "$work/auth.txt" //127.0.0.1/share -c "$1" >/dev/null; }
acl() { smbcacls -s "$conf" -A "$work/auth.txt" //127.0.0.1/share "$@"; }
put() {  # put FOLDER NAME: a small file created over SMB, so it inherits its ACL as Samba does it
  printf '%s\n' "$2" >"$work/upload"
  smb "cd \"$1\"; put \"$work/upload\" \"$2\""
}

echo "building the share with $(smbd --version)" >&2
# The root: administrators and CREATOR OWNER on everything below, Everyone may list the root only.
# Protected (P) and auto-inherited (AI, with AR: "auto-inherit required", as Windows Explorer asks
# for it; without it smbd drops AI), so that Samba marks what is created below as inherited (I).
# (Masks in hexadecimal: Samba 4.17 reads the SDDL token FA as 0x1ff.)
acl / --sddl --set 'D:PAIAR(A;OICI;0x1f01ff;;;BA)(A;OICIIO;0x1f01ff;;;CO)(A;;0x1200a9;;;WD)'

# The tree first, everything inheriting from the root, as files copied onto a new share
for folder in 営業部 営業部/見積 営業部/社外秘 営業部/提出用 営業部/提出用/下書き \
    人事部 人事部/給与 人事部/評価 共有 共有/全社 共有/名簿; do
  smb "mkdir \"$folder\""
done
put / お知らせ.txt
put 営業部/見積 2024_見積書.xlsx
put 営業部/社外秘 価格表.xlsx
put 営業部/提出用 申請書.docx
put 営業部/提出用/下書き 案.docx
put 人事部 規程.docx
put 人事部/給与 2024年度.xlsx
put 共有/全社 就業規則.pdf
put 共有/全社 給与規程.pdf
put 共有/名簿 名簿.xlsx

# Then the ACLs, top down, each change propagated to what is below (as Explorer's Apply does)
p=--propagate-inheritance
# 営業部: sales may change everything in it
acl 営業部 $p --add "ACL:$nas\\営業部:ALLOWED/OI|CI/CHANGE"
# 社外秘: a deny for sales, and the auditors may read
acl 営業部/社外秘 $p --add "ACL:$nas\\営業部:DENIED/OI|CI/READ,ACL:$nas\\監査:ALLOWED/OI|CI/READ"
# 提出用: HR may read the files in it, not those of its sub-folders (no-propagate)
acl 営業部/提出用 $p --add "ACL:$nas\\人事部:ALLOWED/OI|NP/READ"
# 人事部: protected (inheritance removed), HR only
acl 人事部 --inherit remove
acl 人事部 $p --add "ACL:BUILTIN\\Administrators:ALLOWED/OI|CI/FULL,ACL:$nas\\人事部:ALLOWED/OI|CI/FULL"
# 給与: a deny for a SID nobody resolves; 評価: an allow for it (評価 is empty: its ACL changes below)
acl 人事部/給与 $p --add "ACL:$orphan:DENIED/OI|CI/READ"
acl 人事部/評価 $p --add "ACL:$orphan:ALLOWED/OI|CI/READ"
# 規程.docx: a file-level allow for sales, wider than its folder
acl 人事部/規程.docx --add "ACL:$nas\\営業部:ALLOWED/0x0/READ"
# 共有: everyone reads; sales may also write (a right that does not read)
acl 共有 $p --add "ACL:Everyone:ALLOWED/OI|CI/READ,ACL:$nas\\営業部:ALLOWED/OI|CI/0x00100116"
# 給与規程.pdf: a file-level deny for sales, narrower than its folder
acl 共有/全社/給与規程.pdf --add "ACL:$nas\\営業部:DENIED/0x0/READ"
# 名簿: protected (inherited ACEs copied, then edited): the auditors read, HR may only list the
# folder (list folder contents: CI, no OI); Everyone's read and sales' write removed
acl 共有/名簿 --inherit copy
acl 共有/名簿 $p --delete "ACL:Everyone:ALLOWED/OI|CI/READ,ACL:$nas\\営業部:ALLOWED/OI|CI/0x00100116"
acl 共有/名簿 $p --add "ACL:$nas\\監査:ALLOWED/OI|CI/READ,ACL:$nas\\人事部:ALLOWED/CI/READ"

paths() { (cd "$work/share" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort); }
listing() {  # listing [--numeric]: the documented loop, root first
  { echo "/"; acl / "$@"; paths | while IFS= read -r p; do echo "$p"; acl "$p" "$@" </dev/null; done; }
}
sddl() {  # smbcacls --sddl per path: the path, then its security descriptor in SDDL
  { echo "/"; acl / --sddl 2>/dev/null
    paths | while IFS= read -r p; do echo "$p"; acl "$p" --sddl 2>/dev/null </dev/null; done; }
}
ntacl() {  # samba-tool reads the xattr itself: a shell on the NAS, no SMB
  { echo "/"; samba-tool ntacl get "$work/share" --as-sddl --use-s3fs --service=share -s "$conf" 2>/dev/null </dev/null
    paths | while IFS= read -r p; do
      echo "$p"; samba-tool ntacl get "$work/share/$p" --as-sddl --use-s3fs --service=share -s "$conf" 2>/dev/null </dev/null
    done; }
}
has_save() { [[ "$(smbcacls --help 2>&1)" == *--save=* ]]; }
export_all() {  # export_all SUFFIX
  listing >"$out/samba-listing$1.txt"
  listing --numeric >"$out/samba-listing-numeric$1.txt"
  sddl >"$out/samba-sddl$1.txt"
  ntacl >"$out/samba-ntacl-sddl$1.txt"
  if has_save; then
    rm -f "$work/save.txt"
    acl / --recurse --save "$work/save.txt" >/dev/null
    install -m 0644 "$work/save.txt" "$out/samba-save$1.txt"
  else
    echo "smbcacls $(smbcacls --version 2>/dev/null || true) has no --save: samba-save$1.txt not written" >&2
  fi
}
export_all ""
# One folder's ACL changes on the NAS: the auditors may now read 人事部/評価
acl 人事部/評価 $p --add "ACL:$nas\\監査:ALLOWED/OI|CI/READ"
export_all "-changed"
smbd --version >"$out/samba-version.txt"
echo "wrote $(ls "$out"/samba-* | wc -l) files to $out" >&2

#!/bin/sh
# make-disk.sh MKE2FS OUT STAGE TEXT PROGRAM...
# The Linux guest's disk image OUT: an ext2 file system (mke2fs -d from the staging directory
# STAGE) holding text.txt (TEXT), its md5 as `md5sum -c` reads it under /mnt, and the C workloads
# in bin/. /init mounts it read-only on /mnt (the machine's disk is read-only); the disk workload
# reads it by PIO through Linux's pata_legacy. Byte-for-byte reproducible: fixed UUID and hash
# seed, every time stamp 0 (E2FSPROGS_FAKE_TIME, the staged files', and each inode's ctime, which
# mke2fs copies from the staged file and only debugfs can set).
set -eu
mke2fs=$1 out=$2 stage=$3 text=$4
shift 4
rm -rf "$stage"
mkdir -p "$stage/bin"
cp "$text" "$stage/text.txt"
sum=$(md5sum < "$text")
echo "${sum%% *}  /mnt/text.txt" > "$stage/text.md5"
for p in "$@"; do cp "$p" "$stage/bin/"; done
chmod 755 "$stage" "$stage/bin" "$stage"/bin/*
chmod 644 "$stage/text.txt" "$stage/text.md5"
find "$stage" -exec touch -h -d @0 {} +
uuid=5c17ca70-0486-4e00-8000-000000000001
rm -f "$out.tmp"
E2FSPROGS_FAKE_TIME=1 "$mke2fs" -q -F -t ext2 -b 1024 -m 0 -L citcat -U "$uuid" \
  -E "root_owner=0:0,hash_seed=$uuid" -d "$stage" "$out.tmp" 2048 > /dev/null
(cd "$stage" && find .) | sed 's|^\.||; s|^$|/|; s|.*|set_inode_field & ctime 0|' > "$stage.debugfs"
E2FSPROGS_FAKE_TIME=1 "$(dirname "$mke2fs")/debugfs" -w -f "$stage.debugfs" "$out.tmp" > /dev/null 2>&1
mv "$out.tmp" "$out"

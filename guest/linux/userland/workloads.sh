# The shell workloads of the Linux guest and the dispatcher, sourced by /init (installed as
# /usr/share/citcat/workloads.sh). The list, with descriptions, is workloads.txt; a C workload
# is the program /usr/lib/citcat/NAME, a shell workload the function wl_NAME here. Each prints
# "NAME: ... ok" when its result is the known one, "NAME: ... BAD ..." and fails otherwise.
# Inputs: /usr/share/citcat/text.txt (96 KB of generated text, tools/mktext.cc) and text.md5
# (its md5, computed on the host at build time).

CITCAT_DATA=/usr/share/citcat
CITCAT_TEXT=$CITCAT_DATA/text.txt

# The known md5 of the text, from text.md5 ("HASH  PATH").
citcat_known_md5() {
  read -r sum rest < $CITCAT_DATA/text.md5
  echo "$sum"
}

# citcat_check NAME GOT WANT WHAT: prints the verdict, fails on a mismatch.
citcat_check() {
  if [ "$2" = "$3" ]; then
    echo "$1: $4 $2 ok"
  else
    echo "$1: $4 $2 BAD, expected $3"
    return 1
  fi
}

# gzip: compress into tmpfs, decompress through a pipe into md5sum.
wl_gzip() {
  gzip -c $CITCAT_TEXT > /tmp/text.gz || return 1
  set -- $(gunzip -c /tmp/text.gz | md5sum)
  size=$(wc -c < /tmp/text.gz)
  rm -f /tmp/text.gz
  citcat_check gzip "$1" "$(citcat_known_md5)" "round trip of $size compressed bytes, md5"
}

# md5: md5sum -c against the host's sum, and sha1sum.
wl_md5() {
  md5sum -c $CITCAT_DATA/text.md5 > /dev/null || { echo "md5: md5sum -c BAD"; return 1; }
  set -- $(sha1sum $CITCAT_TEXT)
  echo "md5: md5sum -c ok, sha1 $1"
}

# textsort: word frequencies (one word a line by tr, sort, uniq -c, sort -rn), and wc.
wl_textsort() {
  tr ' ' '\n' < $CITCAT_TEXT | sort | uniq -c | sort -rn > /tmp/freq || return 1
  words=$(wc -l < /tmp/freq)
  set -- $(head -n 1 /tmp/freq)
  top="$2 ($1 times)"
  set -- $(sort $CITCAT_TEXT | uniq | wc -l)
  echo "textsort: $words distinct words, most frequent $top, $1 distinct lines"
  rm -f /tmp/freq
  [ "$words" -gt 100 ]
}

# disk: the ext2 file system on the ATA disk (read by PIO): md5sum -c of its text, a walk of
# its tree, and a program run from it.
wl_disk() {
  [ -f /mnt/text.md5 ] || { echo "disk: no file system on /mnt (capture without --disk?) BAD"; return 1; }
  md5sum -c /mnt/text.md5 > /dev/null || { echo "disk: md5sum -c BAD"; return 1; }
  files=$(find /mnt -type f | wc -l)
  out=$(/mnt/bin/sort) || { echo "disk: /mnt/bin/sort BAD"; return 1; }
  case $out in
    *" ok") echo "disk: md5sum -c ok, $files files, /mnt/bin/sort ok" ;;
    *) echo "disk: /mnt/bin/sort printed '$out' BAD"; return 1 ;;
  esac
}

# pipes: six processes in one pipeline.
wl_pipes() {
  set -- $(seq 1 3000 | sed 's/\(.\)$/& \1/' | grep ' [37]$' | tr ' ' ':' | sort -u | wc -l)
  citcat_check pipes "$1" 600 "lines"
}

# loop: shell arithmetic, tests, and fork and exec of /bin/true.
wl_loop() {
  i=0
  s=0
  forks=0
  while [ $i -lt 200 ]; do
    s=$(((s * 31 + i * i) % 65521))
    if [ $((i % 4)) -eq 0 ]; then
      /bin/true && forks=$((forks + 1))
    fi
    i=$((i + 1))
  done
  citcat_check loop "$s/$forks" "53993/50" "sum/forks"
}

# files: a small tree on tmpfs, copied, moved, linked, listed and removed.
wl_files() {
  d=/tmp/files
  mkdir -p $d/a/b/c || return 1
  dd if=$CITCAT_TEXT of=$d/a/part bs=4096 count=8 2> /dev/null
  cp $CITCAT_TEXT $d/a/b/text
  cp -r $d/a $d/copy
  mv $d/copy/b/text $d/copy/b/c/moved
  ln -s ../part $d/a/b/link
  ln $d/a/part $d/a/hard
  n=$(ls -lR $d | wc -l)
  set -- $(cat $d/a/b/link $d/copy/b/c/moved | wc -c)
  rm -r $d
  citcat_check files "$1" "$((32768 + $(wc -c < $CITCAT_TEXT)))" "ls -lR $n lines, bytes read back"
}

# find: every regular file but /proc's and /sys's, and the workload programs by name.
wl_find() {
  set -- $(find / \( -path /proc -o -path /sys \) -prune -o -type f -print | wc -l)
  files=$1
  set -- $(find /usr -name '[a-z]*' -type f -perm -100 | wc -l)
  echo "find: $files files, $1 executables under /usr"
  [ "$files" -gt 0 ]
}

# citcat_run NAME: one workload; fails when it fails.
citcat_run() {
  if [ -x /usr/lib/citcat/$1 ]; then
    /usr/lib/citcat/$1
  elif type wl_$1 > /dev/null 2>&1; then
    wl_$1
  else
    echo "citcat: no workload $1"
    return 1
  fi
  status=$?
  [ $status -eq 0 ] || echo "citcat: $1 failed (exit $status)"
  return $status
}

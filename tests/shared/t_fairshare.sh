# Fair share between three real users: with priority factors 1000, 2000
# and 4000 and no usage yet, a root pass over 7 slots gives them 4, 2 and
# 1, the shares their effective priorities say (HTCondor's pie: a share
# is inversely proportional to the effective priority).

A=ternt_a
B=ternt_b
C=ternt_c
domain=$(/usr/bin/tern_config_val UID_DOMAIN)
/usr/bin/tern_userprio -setfactor "$A@$domain" 1000 >/dev/null
/usr/bin/tern_userprio -setfactor "$B@$domain" 2000 >/dev/null
/usr/bin/tern_userprio -setfactor "$C@$domain" 4000 >/dev/null
for u in $A $B $C; do
    submit_as $u 'executable = /bin/sleep
arguments = 30
queue 10' >/dev/null
done
export _TERN_NUM_CPUS=7
root_pass
running() { /usr/bin/tern_q -allusers -constraint 'JobStatus == 2' -af Owner | grep -c "^$1\$"; }
got="$(running $A) $(running $B) $(running $C)"
check_eq "7 slots shared 4:2:1 by factors 1000:2000:4000" "$got" "4 2 1"
for u in $A $B $C; do
    as_user $u /usr/bin/tern_rm $u >/dev/null
done
unset _TERN_NUM_CPUS

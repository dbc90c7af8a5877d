#!/bin/bash
# A fake Slurm for the gridmanager's tests: sbatch, squeue, scontrol, sacct
# and scancel in one script, chosen by the name it runs under, keeping its
# jobs in $SLURM_FAKE_STATE (one file a job: `state|exitcode|start|end|name`).
# Every call is appended to $SLURM_FAKE_STATE/calls. The test drives the jobs by
# rewriting their files; `down` makes every command fail as with the
# controller unreachable; `sbatch_fail` holds what a failing sbatch says.
d=${SLURM_FAKE_STATE:?}
mkdir -p "$d/jobs" "$d/scripts"
me=$(basename "$0")
echo "$me $*" >>"$d/calls"
down() {
    if [ -e "$d/down" ]; then
        echo "$1: error: Unable to contact slurm controller (connect failure)" >&2
        exit 1
    fi
}
field() { cut -d'|' -f"$2" "$d/jobs/$1"; }
case "$me" in
sbatch)
    down sbatch
    script=$(cat)
    if [ -e "$d/sbatch_fail" ]; then
        cat "$d/sbatch_fail" >&2
        exit 1
    fi
    n=$(($(cat "$d/next" 2>/dev/null || echo 0) + 1))
    echo "$n" >"$d/next"
    name=$(printf '%s\n' "$script" | sed -n 's/^#SBATCH --job-name=//p')
    printf '%s\n' "$script" >"$d/scripts/$n"
    echo "PENDING|0:0|0|0|$name" >"$d/jobs/$n"
    # A slow answer: the job exists before sbatch says so.
    [ -e "$d/sbatch_delay" ] && sleep "$(cat "$d/sbatch_delay")"
    echo "Submitted batch job $n"
    ;;
squeue)
    down squeue
    want=""
    while [ $# -gt 0 ]; do
        case "$1" in -n) want=$2; shift ;; esac
        shift
    done
    for f in "$d"/jobs/*; do
        [ -e "$f" ] || continue
        id=$(basename "$f")
        [ -e "$d/gone_$id" ] && continue
        IFS='|' read -r st ec s e name <"$f"
        if [ -n "$want" ]; then
            # squeue -n NAME -o '%i|%j'
            [ "$name" = "$want" ] && echo "$id|$name"
            continue
        fi
        echo "$id|$st|None|$name"
    done
    ;;
scontrol)
    down scontrol
    if [ -e "$d/scontrol_fail" ]; then
        echo "slurm_load_jobs error: Socket timed out on send/recv operation" >&2
        exit 1
    fi
    id=${4:-}
    if [ -z "$id" ] || [ ! -e "$d/jobs/$id" ] || [ -e "$d/gone_$id" ]; then
        echo "slurm_load_jobs error: Invalid job id specified" >&2
        exit 1
    fi
    IFS='|' read -r st ec s e name <"$d/jobs/$id"
    echo "JobId=$id JobName=$name JobState=$st Reason=None ExitCode=$ec StartTime=$s EndTime=$e"
    ;;
sacct)
    down sacct
    [ -e "$d/no_sacct" ] && exit 1
    for f in "$d"/jobs/*; do
        [ -e "$f" ] || continue
        id=$(basename "$f")
        IFS='|' read -r st ec s e name <"$f"
        case "$st" in PENDING | RUNNING) continue ;; esac
        case "$*" in
        *jobname*) echo "$id|$name" ;;
        *) echo "$id|$st|$ec|$s|$e" ;;
        esac
    done
    ;;
scancel)
    down scancel
    id=$1
    if [ -e "$d/jobs/$id" ]; then
        IFS='|' read -r st ec s e name <"$d/jobs/$id"
        echo "CANCELLED|0:15|$s|$s|$name" >"$d/jobs/$id"
    fi
    ;;
esac

# bash completion for passhost (installed as
# share/bash-completion/completions/passhost): options, as `passhost --help`
# lists them; pass names after --passes, --skip, --trace-rule and
# --check-rules (as `passhost --list-passes` finds them, with the
# --plugin-dir of the line);
# the levels after --level; files and folders elsewhere.

_passhost_passes()
{
    local dir=$1
    passhost --list-passes ${dir:+--plugin-dir "$dir"} 2>/dev/null |
        awk 'NR > 1 && /^[a-z0-9_.]+ / { print $1 }'
}

_passhost()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local opt= value=
    # --opt=value as one word (bash may also split it at '=')
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        value=${cur#*=}
    elif [[ $cur != -* && $prev == --*= ]]; then
        opt=${prev%=}
        value=$cur
    elif [[ $cur == "=" && $prev == --* ]]; then
        opt=$prev
        value=
    elif [[ $prev == -* && $cur != -* ]]; then
        opt=$prev
        value=$cur
    fi
    local i dir=
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        [[ ${COMP_WORDS[i]} == --plugin-dir ]] && dir=${COMP_WORDS[i + 1]}
        [[ ${COMP_WORDS[i]} == --plugin-dir=* ]] && dir=${COMP_WORDS[i]#--plugin-dir=}
    done
    case $opt in
    --passes | --skip | --trace-rule | --check-rules)
        local head= last=$value
        if [[ $opt != --trace-rule && $opt != --check-rules && $value == *,* ]]; then
            head=${value%,*},
            last=${value##*,}
        fi
        local names
        names=$(_passhost_passes "$dir")
        COMPREPLY=($(compgen -P "$head" -W "$names" -- "$last"))
        [[ $cur == --*=* ]] && COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
        return
        ;;
    --level)
        COMPREPLY=($(compgen -W "none exact fp approx" -- "$value"))
        [[ $cur == --*=* ]] && COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
        return
        ;;
    -i | --input | -o | --output | --report-json | --report-html | --input-shape | \
        --overwrite-input-shape | --set | --max-rewrites | --pass-timeout | --inputs | --outputs)
        [[ $cur == --*=* ]] && return
        COMPREPLY=($(compgen -f -- "$value"))
        return
        ;;
    --plugin-dir | --dump-dir | --crash-out | --bisect-out | --repro-dir)
        [[ $cur == --*=* ]] && return
        COMPREPLY=($(compgen -d -- "$value"))
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$(passhost --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' |
            sed 's/^[ ,]*//' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}

complete -o filenames -F _passhost passhost

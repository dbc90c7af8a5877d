//! The shells' completion scripts: each hands the words up to the cursor to
//! `tern_complete --` and offers what it prints (or the shell's own file
//! completion for `__files__`). One script serves every tool, and the
//! `condor_` names of tools linked as HTCondor's.

/// The tools the scripts complete: the user's tools, by both names.
fn names() -> Vec<String> {
    let mut v = Vec::new();
    for (name, _) in super::super::multicall::TOOLS {
        if super::command_of(name).is_some() {
            v.push(name.to_string());
        }
    }
    v.push("tern_complete".to_string());
    v.sort();
    v.dedup();
    let condor: Vec<String> = v
        .iter()
        .filter(|n| *n != "tern_complete")
        .map(|n| n.replacen("tern_", "condor_", 1))
        .collect();
    v.extend(condor);
    v
}

/// The script for `shell` (bash, zsh or fish).
pub fn script(shell: &str) -> String {
    let names = names();
    match shell {
        "bash" => bash(&names),
        "zsh" => zsh(&names),
        _ => fish(&names),
    }
}

fn bash(names: &[String]) -> String {
    format!(
        r#"# bash completion for tern's tools (tern_complete -shell bash).
# Every word up to the cursor goes to tern_complete, which reads the tool's
# options and the queue; '__files__' asks for file names.
_tern_complete() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} out IFS=$'\n'
    local helper
    helper=$(command -v tern_complete 2>/dev/null) || helper=${{COMP_WORDS[0]%/*}}/tern_complete
    out=$("$helper" -- "${{COMP_WORDS[@]:0:COMP_CWORD+1}}" 2>/dev/null) || return 0
    if [[ $out == __files__ ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    else
        COMPREPLY=($out)
    fi
}}
complete -o default -o bashdefault -F _tern_complete {}
"#,
        names.join(" ")
    )
}

fn zsh(names: &[String]) -> String {
    format!(
        r#"#compdef {}
# zsh completion for tern's tools (tern_complete -shell zsh): install as
# _tern in a directory on $fpath before compinit runs.
_tern() {{
    local -a out
    out=("${{(@f)$(tern_complete -- "${{(@)words[1,CURRENT]}}" 2>/dev/null)}}")
    if [[ ${{out[1]}} == __files__ ]]; then
        _files
    elif (( ${{#out}} )) && [[ -n ${{out[1]}} ]]; then
        compadd -Q -- "${{out[@]}}"
    fi
}}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _tern "$@"
else
    compdef _tern {}
fi
"#,
        names.join(" "),
        names.join(" ")
    )
}

fn fish(names: &[String]) -> String {
    let mut s = String::from(
        r#"# fish completion for tern's tools (tern_complete -shell fish).
function __tern_complete
    set -l out (tern_complete -- (commandline -opc) (commandline -ct) 2>/dev/null)
    if test "$out" = __files__
        __fish_complete_path (commandline -ct)
    else
        printf '%s\n' $out
    end
end
"#,
    );
    for n in names {
        s.push_str(&format!("complete -c {n} -f -a '(__tern_complete)'\n"));
    }
    s
}

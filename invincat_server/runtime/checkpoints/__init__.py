"""Checkpoints: what every turn changed in the workspace, so a rewind can undo it.

Before a turn first changes a file (write_file, edit_file, or an approved `execute`),
the pre-change content of each path it changes is kept in a content-addressed object
store under `$INVINCAT_HOME/checkpoints/<project>/` (private files, runtime/
private_files.py), with one manifest per thread and turn naming path → blob and mode, or
"absent". docs/rewind.md says what is recorded, where, the size cap and what is not
restored.

- store.py       the object store and the per-project folder (blobs, verified on read)
- manifests.py   a turn's manifest: path → state before / after, strict JSON
- tree.py        the project's tracked-and-unignored files, hashed through a stat cache
- recorder.py    the running turn's recorder (a context variable the tools consult)
- planning.py    a rewind's plan: per file the target, the diff, what changed by hand
- restore.py     applying a plan (no link followed, modes restored), itself recorded
- pruning.py     the per-project size cap and deleting a thread's checkpoints
- rewind.py      the one API front ends call: turns, plan, restore (code), truncation
                 of the conversation (through the Session)
- open_files.py  a rewind from an editor: open files are diffed from and restored to
                 their buffers (the front end applies them), recorded in the same checkpoint
- wire.py        turns, plan and outcome as the JSON every front end sends
"""

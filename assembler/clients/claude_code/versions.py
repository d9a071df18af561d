"""The Claude Code releases ctxasm models, and every behaviour that differs between them.

One row per fact: the range of modelled versions it holds for, and where it was observed
(SPEC is `../shared/docs/SPEC.md`; "recorded" means both releases' requests were captured
for the same trees against a local fake API). The code asks `facts(run).<name>`, never a
version; a new release is a new entry of `MODELLED` and the rows that change.

Behaviour found on 2.1.197 that SPEC does not list as changed in 2.1.332 (nested rules at
their directory's position on a read, a `claudeMdExcludes` list with a non-string entry
ignored whole) holds for every model and is no row: it becomes one when a release changes it.
"""

from __future__ import annotations

from typing import NamedTuple

from ...discovery.context import Run
from ...parsing.parse import Bom, Dialect
from ...versions import Fact, VersionTable

OLD, NEW = "2.1.197", "2.1.332"
MODELLED = (OLD, NEW)

FACTS = (
    Fact("agents_md", NEW, None, "SPEC 4b.1: the built-in agents-md plugin (since about "
         "2.1.277, no boundary observed between the models); recorded on 2.1.332, absent on 2.1.197"),
    Fact("claude_md_block", NEW, None, "SPEC 4b.2: the instructions are their own block of the "
         "first user message, the date another; recorded on 2.1.332 (2.1.197: a # claudeMd section)"),
    Fact("memory_lf_before_cut", NEW, None, "SPEC 4b.3: MEMORY.md's CRLF made LF before the "
         "200-line / 25,000-character cut; recorded on 2.1.332 (2.1.197 keeps the \\r)"),
    Fact("memory_cut_detail", NEW, None, "SPEC 4b.3: the cut warning says how many lines were cut "
         "and where (wording read from 2.1.332's own truncation function)"),
    Fact("lf_only_when_stripped", NEW, None, "SPEC 4b.4: CRLF kept unless a top-level comment "
         "block is removed; recorded on 2.1.332 (2.1.197: LF whenever the text holds <!--)"),
    Fact("keeps_link_definitions", NEW, None, "SPEC 4b.4: link reference definitions kept in "
         "lexed text; 2.1.197 drops them (SPEC 4b, found by fuzzing 2.1.197)"),
    Fact("frontmatter_after_bom", NEW, None, "SPEC 4b.4: frontmatter after a leading BOM is "
         "parsed; 2.1.197 keeps the BOM in place until the final trim (SPEC 4b, fuzzing 2.1.197)"),
    Fact("root_local_settings", NEW, None, "SPEC 4b.5: the git root's .claude/settings.local.json "
         "is read from a deeper cwd; recorded on 2.1.332, not read by 2.1.197"),
    Fact("linked_imports_external", NEW, None, "SPEC 4b.6: imports through a symlinked directory "
         "that resolves outside cwd are dropped; recorded on 2.1.332 (2.1.197 loads them, SPEC 4)"),
    Fact("lazy_skips_start_imports", NEW, None, "SPEC 4b.7: a read does not attach again a file "
         "imported at start; recorded on 2.1.332 (2.1.197 attaches it again, SPEC 4)"),
    Fact("fork_agent", NEW, None, "SPEC 4c: the fork agent type (the parent's whole conversation); "
         "recorded on 2.1.332, 2.1.197 answers \"Agent type 'fork' not found\""),
    Fact("explore_inherits_model", NEW, None, "SPEC 4c: Explore runs on the main agent's model; "
         "recorded on 2.1.332 (2.1.197: a small model, claude-haiku-4-5-20251001 recorded)"),
    Fact("omit_claude_md", NEW, None, "a custom agent's omitClaudeMd: true starts it without the "
         "instruction files; recorded on 2.1.332 (2.1.197 reads the key and sends them all the same)"),
    Fact("artifact_tools", NEW, None, "Explore and Plan also leave out ArtifactComments, "
         "ArtifactData and ArtifactCheck (the agent-type list recorded on 2.1.332, not on 2.1.197)"),
    Fact("reread_auto_same_turn", NEW, None, "SPEC 4c: after an automatic compaction the "
         "instruction files are re-read in the same turn; recorded on 2.1.332 (2.1.197: at the "
         "next user turn)"),
    Fact("resends_skills_list", NEW, None, "SPEC 4c: the skills list is sent again after a "
         "compaction; recorded on 2.1.332, not on 2.1.197"),
    Fact("compacts_few_messages", NEW, None, "SPEC 4c: a conversation of one exchange is "
         "compacted; recorded on 2.1.332 (2.1.197 refuses two messages, 'Not enough messages "
         "to compact.', and compacts four)"),
    Fact("summary_user_turns_only", NEW, None, "SPEC 4c: the summary instruction's section 6 "
         "says only user-role turns are user messages; recorded on 2.1.332, absent on 2.1.197"),
    Fact("summary_first_manual", NEW, None, "SPEC 4c: after a manual compaction messages[0] is "
         "the summary alone, the start blocks after the restored reads; recorded on 2.1.332 "
         "(tests/data/clients/*/compact-*.json; 2.1.197: the instructions, then the summary)"),
    Fact("summary_last_auto", NEW, None, "SPEC 4c: after an automatic compaction the restored "
         "reads come first, then the start blocks, then the summary; recorded on 2.1.332 "
         "(tests/data/clients/claude-code-2.1.332/compact-auto.json; 2.1.197 not recorded: it "
         "did not compact at a threshold in -p, modelled with its manual order)"),
    Fact("skills_reminder_live_request", NEW, None, "SPEC 4c: the re-injected skills' note "
         "says request text captured in a skill body is not a live request; recorded on both "
         "(tests/data/clients/*/compact-skill.json; 2.1.197 speaks of its ## Input sections)"),
    Fact("continuation_lists_tools", NEW, None, "SPEC 4c: the continuation names the tools used "
         "before the summary and says the later messages are kept verbatim; recorded on 2.1.332"),
)  # fmt: skip

TABLE = VersionTable("Claude Code", MODELLED, FACTS)


class Facts(NamedTuple):
    """Claude Code's version-gated behaviour at one release (the fields are `FACTS`)."""

    agents_md: bool
    claude_md_block: bool
    memory_lf_before_cut: bool
    memory_cut_detail: bool
    lf_only_when_stripped: bool
    keeps_link_definitions: bool
    frontmatter_after_bom: bool
    root_local_settings: bool
    linked_imports_external: bool
    lazy_skips_start_imports: bool
    fork_agent: bool
    explore_inherits_model: bool
    omit_claude_md: bool
    artifact_tools: bool
    reread_auto_same_turn: bool
    resends_skills_list: bool
    compacts_few_messages: bool
    summary_user_turns_only: bool
    summary_first_manual: bool
    summary_last_auto: bool
    skills_reminder_live_request: bool
    continuation_lists_tools: bool


def facts_at(version: str) -> Facts:
    """The facts at `version` (a modelled release; "" for the newest)."""
    return Facts(**TABLE.facts_at(version))


def dialect(facts: Facts) -> Dialect:
    """How the release processes an instruction file's text (`parsing.parse.Dialect`)."""
    return Dialect(
        Bom.FRONTMATTER if facts.frontmatter_after_bom else Bom.KEPT,
        lf_only_when_stripped=facts.lf_only_when_stripped,
        keep_definitions=facts.keeps_link_definitions,
    )


def facts(run: Run) -> Facts:
    """The facts at the release `run` models."""
    return facts_at(run.version.modelled)

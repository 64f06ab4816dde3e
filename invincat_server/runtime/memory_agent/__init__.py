"""The memory agent (phase 1 of governed memory): after a completed, non-trivial turn it
proposes a batch of memory operations from the new part of the conversation; the
governance pipeline (runtime/memory) decides what is written."""

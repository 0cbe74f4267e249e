#!/usr/bin/env python3
"""A camera-like writer for the live-mode tests (tests/app/tst_watch.cpp): writes stacks into a folder the
ways real writers do, and dies mid-file the way a crashed one does.

    live_writer.py DEST [--pause S] [--repeat N] STEP...

Each STEP is MODE:SOURCE:NAME, done in order, with --pause seconds between steps:
  chunks   write DEST/NAME in place, in 8 chunks with short pauses (a writer holding the file open)
  rename   write DEST/.NAME.tmp in chunks, then rename it to DEST/NAME (a writer that renames when done)
  corrupt  rename into DEST/NAME as many bytes of noise as SOURCE has (a damaged file)
  kill     write half of SOURCE into DEST/NAME in chunks, then SIGKILL itself (a writer that dies mid-file)
--repeat N repeats the steps N times, NAME's '{}' replaced by a running number (a soak).
Prints "wrote NAME" after each complete file, flushed, so a test can count events.
"""
import os
import random
import signal
import sys
import time

CHUNKS = 8
CHUNK_PAUSE = 0.02


def write_chunks(path, data, count=CHUNKS):
    step = max(1, (len(data) + count - 1) // count)
    with open(path, "wb") as f:
        for at in range(0, len(data), step):
            f.write(data[at:at + step])
            f.flush()
            os.fsync(f.fileno())
            time.sleep(CHUNK_PAUSE)


def main(argv):
    dest = argv[1]
    pause, repeat = 0.0, 1
    steps = []
    args = argv[2:]
    while args:
        a = args.pop(0)
        if a == "--pause":
            pause = float(args.pop(0))
        elif a == "--repeat":
            repeat = int(args.pop(0))
        else:
            mode, source, name = a.split(":", 2)
            steps.append((mode, source, name))
    cache = {}
    number = 0
    for _ in range(repeat):
        for mode, source, name in steps:
            number += 1
            name = name.replace("{}", "%05d" % number)
            if source not in cache:
                with open(source, "rb") as f:
                    cache[source] = f.read()
            data = cache[source]
            target = os.path.join(dest, name)
            if mode == "chunks":
                write_chunks(target, data)
            elif mode == "rename":
                temporary = os.path.join(dest, "." + name + ".tmp")
                if repeat > 1:
                    with open(temporary, "wb") as f:  # a soak: one write, then the rename
                        f.write(data)
                else:
                    write_chunks(temporary, data)
                os.rename(temporary, target)
            elif mode == "corrupt":
                rng = random.Random(len(data))
                temporary = os.path.join(dest, "." + name + ".tmp")
                with open(temporary, "wb") as f:
                    f.write(bytes(rng.getrandbits(8) for _ in range(len(data))))
                os.rename(temporary, target)
            elif mode == "kill":
                half = data[: len(data) // 2]
                f = open(target, "wb")
                step = max(1, len(half) // CHUNKS)
                for at in range(0, len(half), step):
                    f.write(half[at:at + step])
                    f.flush()
                    time.sleep(CHUNK_PAUSE)
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                sys.exit("unknown mode " + mode)
            print("wrote " + name, flush=True)
            if pause > 0:
                time.sleep(pause)


if __name__ == "__main__":
    main(sys.argv)

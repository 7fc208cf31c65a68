"""Experiment only: the direction levels' kernel records a globaltimer stamp per level into state[16 + level]."""
import sys
p = sys.argv[1] + '/mgraph/ops/cupy_levels.py'
s = open(p).read()
old = '''        block_flush(a, lane, out, &state[12 + p], &state[5 + p], &state[18 + p]);
        grid.sync();  // the level's appends, gaps and counts are in
'''
new = old + '''        if (tid == 0 && it < 40) { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); state[24 + it] = t; }
'''
assert old in s; s = s.replace(old, new)
old = '''    for (int it = 0;; ++it) {
        const int level = level0 + it, p = it & 1, q = p ^ 1;
        visited += m;'''
new = '''    if (tid == 0) { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); state[23] = t; }
''' + old
assert old in s; s = s.replace(old, new)
s = s.replace("state = cuda.counters(device, 20)", "state = cuda.counters(device, 64)")
old = "    words = cuda.read_words(state, 20)\n"
new = "    words = cuda.read_words(state, 64)\n    EXP.append([words[2]] + [(words[24 + k] - words[23 + k]) / 1e3 for k in range(min(words[2], 40))])\n"
assert old in s; s = s.replace(old, new)
s = s.replace("_HUB_COUNT = weakref", "EXP = []\n_HUB_COUNT = weakref")
open(p, 'w').write(s)

import re, subprocess, sys
progs = sys.argv[1:]
for p in progs:
    try:
        out = subprocess.run([p, '--help'], capture_output=True, text=True, timeout=5).stdout
    except Exception as e:
        print("#", p, e); continue
    short, shortarg, longs = set(), set(), {}
    for line in out.splitlines():
        m = re.match(r'^\s{1,8}(-.*)$', line)
        if not m: continue
        spec = re.split(r'\s{2,}', m.group(1).strip())[0]
        lineshort=[]; linearg=False
        for part in re.split(r',\s*', spec):
            part = part.strip()
            mm = re.match(r'^--([a-zA-Z0-9][a-zA-Z0-9-]*)(\[=[^\]]*\]|=\S+| [A-Z]\S*)?', part)
            if mm:
                name, arg = mm.group(1), mm.group(2) or ''
                t = '?' if arg.startswith('[') else ('=' if arg else '')
                longs[name] = t
                if t=='=': linearg=True
                # --[no-]x forms
                continue
            mm = re.match(r'^-([a-zA-Z0-9])(\s*[A-Z\[]\S*)?', part)
            if mm:
                c, arg = mm.group(1), mm.group(2)
                if arg and not arg.strip().startswith('['): shortarg.add(c)
                else: lineshort.append(c)
        for c in lineshort:
            (shortarg if linearg else short).add(c)
    print(f'{p}\t{"".join(sorted(short))}\t{"".join(sorted(shortarg))}\t{" ".join(n+t for n,t in sorted(longs.items()))}')

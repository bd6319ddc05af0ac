"""Evaluate hand order vs LLM (Yes-No logit) vs combinations; settings chosen by leave-one-book-out on tune books.
usage: eval.py [--variant v1] [--k 6]"""
import json, os, argparse, numpy as np
from llm_score import BOOKS
TUNE=BOOKS["new"]; REP=BOOKS["report"]
ap=argparse.ArgumentParser(); ap.add_argument("--variant",default="v1"); ap.add_argument("--k",type=int,default=6); a=ap.parse_args()
def sfile(st,b): return f"/work/llmrank/scores_{st}_{b}.jsonl" if a.variant=="v1" else f"/work/llmrank/scores_{a.variant}_{st}_{b}.jsonl"
def load(st,b):
    qs=[json.loads(l) for l in open(f"/work/rk_dump/{st}/{b}.jsonl")]
    S={}
    if os.path.exists(sfile(st,b)):
        for l in open(sfile(st,b)): r=json.loads(l); S[(r["qi"],r["ci"])]=r["score"]
    out=[]; miss=0
    for qi,q in enumerate(qs):
        cs=[c for c in q["candidates"] if c["matches"]]
        if not cs: continue
        top=cs[:a.k]
        llm=[S.get((qi,i)) for i in range(len(top))]
        if any(x is None for x in llm): miss+=1; continue   # not scored yet
        out.append(dict(lab=np.array([c["label"] for c in top]), st=np.array([bool(c.get("states")) for c in top]),
                        hs=np.array([c["score"] for c in top]), llm=np.array(llm), ceil=max(c["label"] for c in cs)>=0.5))
    return out, miss
D={}; MISS={}
for st in ("new","bench","report"):
    for b in BOOKS[st]: D[(st,b)],MISS[(st,b)]=load(st,b)
# --- choosers: each returns index into top-K
def ch_hand(q,p): return 0
def ch_llm(q,p): return int(np.argmax(q["llm"]))
def ch_rank(q,w):   # z = -rank + w*llm
    return int(np.argmax(-np.arange(len(q["llm"]))+w*q["llm"]))
def ch_score(q,w):  # z = hand score (raw) + w*llm   (hand score spread is ~0.05 per rank)
    return int(np.argmax(q["hs"]+w*q["llm"]))
def ch_margin(q,m): # keep hand choice unless LLM prefers another by > m
    j=int(np.argmax(q["llm"])); return j if q["llm"][j]-q["llm"][0]>m else 0
def ch_zllm(q,w):   # within-question standardized llm + -rank
    l=q["llm"]; z=(l-l.mean())/(l.std()+1e-6); return int(np.argmax(-np.arange(len(l))+w*z))
FAM={"rank":(ch_rank,[0.25,0.5,1,2,3,5,8,15]),"score":(ch_score,[0.005,0.01,0.02,0.03,0.05,0.08,0.12,0.2,0.5]),
     "margin":(ch_margin,[0,0.1,0.25,0.5,0.75,1,1.5,2,3]),"zrank":(ch_zllm,[0.25,0.5,1,1.5,2,3,5])}
FLIPS={}
def run(qs,f,p,tag=None):
    ok=st=0
    for q in qs:
        i=f(q,p); ok+=q["lab"][i]>=0.5; st+=bool(q["st"][i])
        if tag and i!=0:
            d=FLIPS.setdefault(tag,[0,0,0]); d[0]+=1; d[1]+=(q["lab"][i]>=0.5)>(q["lab"][0]>=0.5); d[2]+=(q["lab"][i]>=0.5)<(q["lab"][0]>=0.5)
    return ok,st
def n(qs): return len(qs)
def ceil(qs): return sum(q["ceil"] for q in qs), sum((q["lab"]>=0.5).any() for q in qs)
print(f"variant {a.variant} K={a.k}; missing (unscored) questions:", {f"{k[0]}/{k[1]}":v for k,v in MISS.items() if v})
# within-question discrimination of the LLM score: pairwise accuracy on (correct,incorrect) pairs
pa=pt=0
for k,qs in D.items():
    for q in qs:
        y=q["lab"]>=0.5
        for i in np.where(y)[0]:
            for j in np.where(~y)[0]: pa+=(q["llm"][i]>q["llm"][j])+0.5*(q["llm"][i]==q["llm"][j]); pt+=1
print(f"within-question pairwise accuracy of LLM score (correct vs incorrect candidate): {pa/max(pt,1):.3f} over {pt} pairs")
ha=0
for k,qs in D.items():
    for q in qs:
        y=q["lab"]>=0.5
        for i in np.where(y)[0]:
            for j in np.where(~y)[0]: ha+=i<j
print(f"  same pairs, hand order (earlier rank wins): {ha/max(pt,1):.3f}")
# --- LOBO choice per family and overall (family+param) on tune books, fresh+bench pooled
def choose(books, fams):
    best=None
    for fn in fams:
        f,grid=FAM[fn]
        for p in grid:
            ok=sum(run(D[(st,b)],f,p)[0] for b in books for st in ("new","bench"))
            if best is None or ok>best[0]: best=(ok,fn,p)
    return best
rows=[]
res={}  # (method, st, b) -> (ok, states, n)
for st in ("new","bench","report"):
    for b in BOOKS[st]:
        qs=D[(st,b)]
        res[("hand",st,b)]=run(qs,ch_hand,None)+(n(qs),)
        res[("llm",st,b)]=run(qs,ch_llm,None)+(n(qs),)
chosen={}
for tgt in TUNE+["REPORT"]:
    train=[x for x in TUNE if x!=tgt]
    for key,fams in [("comb",list(FAM)),("margin",["margin"]),("rank",["rank"])]:
        c=choose(train,fams); chosen[(key,tgt)]=c
        f,_=FAM[c[1]]
        tb=[tgt] if tgt!="REPORT" else REP
        for st in (("new","bench") if tgt!="REPORT" else ("report",)):
            for b in tb: res[(key,st,b)]=run(D[(st,b)],f,c[2],(key,st))+(n(D[(st,b)]),)
print("\nLOBO-chosen settings (held-out book: family, param, train correct):")
for (key,tgt),c in chosen.items(): print(f"  {key:6s} held-out {tgt:32s} -> {c[1]} {c[2]} (train {c[0]})")
M=["hand","llm","rank","margin","comb"]
print("\ncorrect counts (states==true of chosen in brackets); llm = argmax LLM score over top-%d; rank/margin/comb = LOBO-chosen"%a.k)
for st in ("new","bench","report"):
    print(f"\n[{st}]  {'book':34s} {'n':>4s} "+" ".join(f"{m:>11s}" for m in M)+"   ceil(all) ceil(topK)")
    tot={m:np.zeros(3,int) for m in M}; C=np.zeros(2,int)
    for b in BOOKS[st]:
        qs=D[(st,b)]; c=ceil(qs); C+=c
        cells=[]
        for m in M:
            r=res[(m,st,b)]; tot[m]+=r; cells.append(f"{r[0]:4d} [{r[1]:3d}]")
        print(f"        {b:34s} {n(qs):4d} "+" ".join(f"{x:>11s}" for x in cells)+f"   {c[0]:5d} {c[1]:5d}")
    print(f"        {'POOLED':34s} {tot['hand'][2]:4d} "+" ".join(f"{tot[m][0]:4d} [{tot[m][1]:3d}]".rjust(11) for m in M)+f"   {C[0]:5d} {C[1]:5d}")
print("\nLOBO-chosen methods: questions where the choice differs from hand [changed, gained, lost]:")
for k,v in sorted(FLIPS.items()): print(f"  {k[0]:6s} {k[1]:6s} {[int(x) for x in v]}")
# fixed-grid sweep on all tune books (diagnostic only, in-sample)
print("\nin-sample sweep on tune books (fresh+bench pooled, diagnostic, NOT for selection of report):")
base=sum(run(D[(st,b)],ch_hand,None)[0] for b in TUNE for st in ("new","bench"))
print(f"  hand {base}")
for fn,(f,grid) in FAM.items():
    print(f"  {fn:7s}"+" ".join(f"{p}:{sum(run(D[(st,b)],f,p)[0] for b in TUNE for st in ('new','bench'))}" for p in grid))
print("  report-book sweep (diagnostic only): hand", sum(run(D[('report',b)],ch_hand,None)[0] for b in REP))
for fn,(f,grid) in FAM.items():
    print(f"  {fn:7s}"+" ".join(f"{p}:{sum(run(D[('report',b)],f,p)[0] for b in REP)}" for p in grid))

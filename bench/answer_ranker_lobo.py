import json, sys, numpy as np
sys.path.insert(0,"/work/wt/ranker/tools"); sys.path.insert(0,"/work/wt/ranker/src"); sys.path.insert(0,"/work/wt/ranker/bench")
from train_answer_ranker import train
TUNE=["thinkjava2","py4e","physical_ai_textbook","economics_econometrics_godwin"]
D=sys.argv[1]; M=float(sys.argv[2]); C=float(sys.argv[3])
data={b:[json.loads(l) for l in open(f"{D}/{b}.jsonl")] for b in TUNE}
tot=np.zeros(4)
for b in TUNE:
    mean,scale,w=train([q for x in TUNE if x!=b for q in data[x]],M,C)
    n=h=l=o=0
    for q in data[b]:
        cs=[c for c in q["candidates"] if c["matches"]]
        if not cs: continue
        n+=1
        h+=cs[0]["label"]>=0.5  # hand order (dump is in hand order, matches first)
        l+=max(cs,key=lambda c:((np.array(c["features"])-mean)/scale)@w)["label"]>=0.5
        o+=max(c["label"] for c in cs)>=0.5
    tot+=(n,h,l,o); print(b,n,h,l,o)
print("total",tot)

"""Experiment: a MiniLM cross-encoder ranker of answer candidates (question, sentence).
train on dumps of --train books, score --eval dumps, write scores json."""
import os, sys, json, random, argparse, time
os.environ["HF_HUB_OFFLINE"]="1"; os.environ["TRANSFORMERS_OFFLINE"]="1"
sys.path.insert(0,"/work/wt/rk/src")
import torch, numpy as np
from bookreader.core.cross_verifier import CrossEncoder
from bookreader.core.embedding import find_model_dir
from transformers import AutoTokenizer
ap=argparse.ArgumentParser()
ap.add_argument("--train",nargs="+",required=True)  # files
ap.add_argument("--eval",nargs="+",required=True)
ap.add_argument("--out",required=True); ap.add_argument("--epochs",type=float,default=2)
ap.add_argument("--top",type=int,default=15); ap.add_argument("--neg",type=int,default=7)
ap.add_argument("--lr",type=float,default=1e-3); ap.add_argument("--save")
a=ap.parse_args()
torch.manual_seed(1); random.seed(1); torch.set_num_threads(2)
def load(fs):
    out=[]
    for f in fs:
        for l in open(f):
            q=json.loads(l); q["_file"]=f; out.append(q)
    return out
def cands(q): return [c for c in q["candidates"] if c["matches"]][:a.top]
tr=load(a.train); ev=load(a.eval)
items=[]
for q in tr:
    cs=cands(q)
    pos=[c for c in cs if c.get("states")] or [c for c in cs if c["label"]>=0.5]
    if not pos: continue
    if any(c.get("states") for c in cs):
        negs=[c for c in cs if not c.get("states") and c["label"]<0.5]
    else:
        negs=[c for c in cs if c["label"]<0.3]
    if not negs: continue
    items.append((q["question"],pos,negs))
print("train questions",len(items),flush=True)
md=find_model_dir(); tok=AutoTokenizer.from_pretrained(str(md))
model=CrossEncoder(md,8,2)
head=[p for n,p in model.named_parameters() if p.requires_grad and n.startswith("head")]
rest=[p for n,p in model.named_parameters() if p.requires_grad and not n.startswith("head")]
opt=torch.optim.AdamW([{"params":head,"lr":3*a.lr},{"params":rest}],lr=a.lr,weight_decay=0.01)
steps=int(len(items)*a.epochs); sched=torch.optim.lr_scheduler.LambdaLR(opt,lambda s:min(1,(s+1)/50)*max(0.05,1-s/steps))
def enc(qs,ss):
    b=tok(list(qs),list(ss),padding=True,truncation="longest_first",max_length=128,return_tensors="pt")
    return b["input_ids"],b["attention_mask"],b["token_type_ids"]
model.train(); t0=time.time(); s=0; run=0
while s<steps:
    random.shuffle(items)
    for qtext,pos,negs in items:
        if s>=steps: break
        p=random.choice(pos); ns=random.sample(negs,min(a.neg,len(negs)))
        sents=[p["sentence"]]+[n["sentence"] for n in ns]
        logits=model(*enc([qtext]*len(sents),sents))
        loss=torch.nn.functional.cross_entropy(logits.unsqueeze(0),torch.zeros(1,dtype=torch.long))
        opt.zero_grad(); loss.backward(); opt.step(); sched.step(); s+=1
        run=0.98*run+0.02*loss.item()
        if s%100==0: print(f"step {s}/{steps} loss {run:.3f} {time.time()-t0:.0f}s",flush=True)
if a.save: torch.save(model.trained_state(),a.save)
model.eval(); out={}
with torch.inference_mode():
    for q in ev:
        cs=[c for c in q["candidates"] if c["matches"]][:30]
        if not cs: continue
        sc=model(*enc([q["question"]]*len(cs),[c["sentence"] for c in cs])).tolist()
        out[q["_file"]+"||"+q["question"]]=sc
json.dump(out,open(a.out,"w"))
print("done",time.time()-t0)

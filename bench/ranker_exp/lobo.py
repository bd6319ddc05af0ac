"""LOBO over tune books: train on other books' dumps (bench + new), evaluate on held-out book.
usage: lobo.py [--label share|states|mix] [--models ...]"""
import json, sys, glob, argparse
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import HistGradientBoostingClassifier
TUNE=["thinkjava2","py4e","physical_ai_textbook","economics_econometrics_godwin"]
ap=argparse.ArgumentParser(); ap.add_argument("--label",default="share"); ap.add_argument("--new",default="/work/rk_dump/new")
ap.add_argument("--bench",default="/work/rk_dump/bench"); ap.add_argument("--no-bench-train",action="store_true")
ap.add_argument("--models",default="hand,lin,point,gbm"); ap.add_argument("--C",type=float,default=1.0); ap.add_argument("--topk",type=int,default=0)
a=ap.parse_args()
def rows(d,b):
    try: return [json.loads(l) for l in open(f"{d}/{b}.jsonl")]
    except FileNotFoundError: return []
bench={b:rows(a.bench,b) for b in TUNE}; new={b:rows(a.new,b) for b in TUNE}
def feats(q):
    cs=[c for c in q["candidates"] if c["matches"]]
    if a.topk: cs=cs[:a.topk]
    X=np.array([c["features"]+[c["score"], 1.0/(i+1)] for i,c in enumerate(cs)],dtype=float)
    return cs,X
def lab(c):
    if a.label=="share": return c["label"]
    if a.label=="states": return 1.0 if c.get("states") else 0.0
    return max(c["label"], 1.0 if c.get("states") else 0.0)
def train(qs, kind):
    Xs=[];ys=[];D=[];
    for q in qs:
        cs,X=feats(q)
        if not cs: continue
        y=np.array([lab(c) for c in cs])
        Xs.append(X); ys.append(y)
    allX=np.vstack(Xs); mean=allX.mean(0); sc=allX.std(0); sc[sc==0]=1
    if kind=="lin":
        for X,y in zip(Xs,ys):
            Z=(X-mean)/sc
            for i in range(len(y)):
                for j in range(len(y)):
                    if y[i]-y[j]>=0.15: D.append(Z[i]-Z[j])
        D=np.array(D); x=np.vstack([D,-D]); t=np.r_[np.ones(len(D)),np.zeros(len(D))]
        m=LogisticRegression(C=a.C,fit_intercept=False,max_iter=5000).fit(x,t)
        return lambda X: ((X-mean)/sc)@m.coef_[0]
    Y=np.concatenate(ys)>=0.5
    if kind=="point":
        m=LogisticRegression(C=a.C,max_iter=5000).fit((allX-mean)/sc,Y)
        return lambda X: m.decision_function((X-mean)/sc)
    if kind=="gbm":
        m=HistGradientBoostingClassifier(max_iter=200,learning_rate=0.05,max_leaf_nodes=15,l2_regularization=1.0,random_state=0).fit(allX,Y)
        return lambda X: m.predict_proba(X)[:,1]
def evaluate(qs, f):
    n=ok=st=best=0
    for q in qs:
        cs,X=feats(q)
        if not cs: continue
        n+=1
        i=int(np.argmax(f(X))) if f else 0
        ok+=cs[i]["label"]>=0.5; st+=bool(cs[i].get("states")); best+=max(c["label"] for c in cs)>=0.5
    return n,ok,st,best
models=a.models.split(",")
tot={m:np.zeros(4) for m in models}; totn={m:np.zeros(4) for m in models}
for b in TUNE:
    tr=[q for x in TUNE if x!=b for q in (new[x] + ([] if a.no_bench_train else bench[x]))]
    line=[b]
    for m in models:
        f=None if m=="hand" else train(tr,m)
        r=evaluate(bench[b],f); rn=evaluate(new[b],f)
        tot[m]+=r; totn[m]+=rn
        line.append(f"{m}: bench {r[1]}/{r[0]} new {rn[1]}/{rn[0]} st {rn[2]}")
    print(" | ".join(line))
for m in models:
    print(f"{m:6s} bench correct {int(tot[m][1])}/{int(tot[m][0])} (ceiling {int(tot[m][3])}); new correct {int(totn[m][1])}/{int(totn[m][0])} states {int(totn[m][2])} (ceiling {int(totn[m][3])})")

import json, numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
TUNE=["thinkjava2","py4e","physical_ai_textbook","economics_econometrics_godwin"]
data={b:[json.loads(l) for l in open(f"/work/rk/dump2/{b}.jsonl")] for b in TUNE}
def cands(q): return [c for c in q["candidates"] if c["matches"]]
def feats(cs):
    F=np.array([c["features"]+[c["score"]] for c in cs]); idx=[0,1,20]
    return np.hstack([F,F[:,idx]-F[:,idx].max(0), np.arange(len(cs))[:,None]])
def XY(books):
    X=[];Y=[]
    for b in books:
        for q in data[b]:
            cs=cands(q)
            if not cs: continue
            y=np.array([c["label"] for c in cs]); X.append(feats(cs)); Y.append(y-y.max())
    return np.vstack(X),np.concatenate(Y)
for depth,it in [(2,100),(3,200),(4,200)]:
    tot=np.zeros(3)
    for b in TUNE:
        X,Y=XY([x for x in TUNE if x!=b]); m=HistGradientBoostingRegressor(max_depth=depth,max_iter=it,learning_rate=0.05,min_samples_leaf=40,random_state=0).fit(X,Y)
        for q in data[b]:
            cs=cands(q)
            if not cs: continue
            p=m.predict(feats(cs)); tot+=(1,cs[0]["label"]>=0.5,cs[int(np.argmax(p))]["label"]>=0.5)
    print(depth,it,tot)

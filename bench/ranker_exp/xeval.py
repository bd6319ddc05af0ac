import json,sys,numpy as np
sc=json.load(open(sys.argv[1])); top=int(sys.argv[2]) if len(sys.argv)>2 else 30
files=sorted({k.split("||")[0] for k in sc})
for f in files:
    qs=[json.loads(l) for l in open(f)]
    res={}
    for q in qs:
        k=f+"||"+q["question"]
        if k not in sc: continue
        cs=[c for c in q["candidates"] if c["matches"]][:30]
        x=np.array(sc[k]); h=np.array([c["score"] for c in cs])
        lab=np.array([c["label"]>=0.5 for c in cs]); st=np.array([bool(c.get("states")) for c in cs])
        n=min(top,len(cs))
        for name,order in [("hand",0),("x",int(np.argmax(x[:n])))]+[(f"h+{w}x",int(np.argmax(h[:n]+w*(x[:n]-x[:n].mean())/(x[:n].std()+1e-6)))) for w in (0.02,0.05,0.1,0.2)]:
            r=res.setdefault(name,[0,0,0]); r[0]+=1; r[1]+=lab[order]; r[2]+=st[order]
        r=res.setdefault("ceiling",[0,0,0]); r[0]+=1; r[1]+=lab.any(); r[2]+=st.any()
    print(f, " ".join(f"{k}:{v[1]}/{v[2]}" for k,v in res.items()), "n",res["hand"][0])

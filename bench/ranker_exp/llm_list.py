"""Listwise variant: one prompt per question listing the top-K matching candidates (numbered, hand order
or reversed with --rev); score of candidate i = log-softmax over digit tokens '1'..'K' at the first answer position.
Writes scores_list_<set>_<book>.jsonl (or scores_listrev_...) in the same row format as llm_score.py; resumable."""
import json, os, time, argparse, numpy as np, llama_cpp
from llm_score import M, BOOKS
SYS=("You pick the sentence from a textbook that directly answers a question. The right sentence states the answer itself; "
     "a sentence that only mentions the topic, restates the question, or introduces the topic is wrong.")
DIG=[16,17,18,19,20,21,22,23,24]  # '1'..'9'
def main():
    ap=argparse.ArgumentParser(); ap.add_argument("--sets",default="new,bench,report"); ap.add_argument("--k",type=int,default=6)
    ap.add_argument("--rev",action="store_true"); ap.add_argument("--limit",type=int,default=0); a=ap.parse_args()
    llm=llama_cpp.Llama(model_path=M,n_ctx=1024,n_threads=1,n_threads_batch=1,logits_all=False,verbose=False); nv=llm.n_vocab()
    tok=lambda s: llm.tokenize(s.encode(),add_bos=False,special=True)
    name="listrev" if a.rev else "list"
    sys_t=tok(f"<|im_start|>system\n{SYS}<|im_end|>\n<|im_start|>user\n"); S=len(sys_t)
    llm.reset(); llm.eval(sys_t)   # system prefix kept in KV across all questions
    tq=tc=0; tt=0.0
    for st in a.sets.split(","):
        for b in BOOKS[st]:
            out=f"/work/llmrank/scores_{name}_{st}_{b}.jsonl"
            done=set()
            if os.path.exists(out): done={json.loads(l)["qi"] for l in open(out)}
            fo=open(out,"a"); qs=[json.loads(l) for l in open(f"/work/rk_dump/{st}/{b}.jsonl")]; nq=0
            for qi,q in enumerate(qs):
                cs=[c for c in q["candidates"] if c["matches"]][:a.k]
                if not cs or qi in done: continue
                if a.limit and nq>=a.limit: break
                nq+=1; t0=time.time()
                order=list(range(len(cs)))[::-1] if a.rev else list(range(len(cs)))
                maxc=max(60,int((1024-S-120-len(tok(q["question"])))/len(cs)))  # token budget per sentence
                lines=[]
                for n,i in enumerate(order):
                    t=tok(cs[i]["sentence"].strip())
                    s=cs[i]["sentence"].strip() if len(t)<=maxc else llm.detokenize(t[:maxc]).decode("utf-8","ignore")+"…"
                    lines.append(f"{n+1}. {s}")
                u=(f"Question: {q['question'].strip()}\n\nSentences:\n"+"\n".join(lines)+
                   f"\n\nWhich sentence directly answers the question? Reply with the number only (1-{len(cs)}).<|im_end|>\n<|im_start|>assistant\n")
                llm.n_tokens=S; llm.eval(tok(u))
                lg=np.ctypeslib.as_array(llm._ctx.get_logits(),shape=(nv,)).astype(np.float64)
                d=lg[DIG[:len(cs)]]; lp=d-np.log(np.exp(d-d.max()).sum())-d.max()
                for n,i in enumerate(order):
                    fo.write(json.dumps({"qi":qi,"ci":i,"question":q["question"],"score":round(float(lp[n]),4),"label":cs[i]["label"],"pos":n})+"\n")
                fo.flush(); dt=time.time()-t0; tt+=dt; tq+=1; tc+=len(cs)
                if tq%20==0: print(f"{st}/{b} q{qi} {tq} q, {tt/tq:.2f} s/q",flush=True)
            fo.close()
    if tq: print(f"DONE {tq} q {tc} cands {tt:.0f}s {tt/tq:.2f} s/q {tt/tc:.3f} s/cand",flush=True)
if __name__=="__main__": main()

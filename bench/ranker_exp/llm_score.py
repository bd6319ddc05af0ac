"""Score top-K matching candidates per question with Qwen2.5-coder-0.5B (Yes/No logit margin).
usage: llm_score.py [--sets new,bench,report] [--variant v1] [--k 6] [--limit N]
Writes /work/llmrank/scores_<set>_<book>.jsonl (v1) or scores_<variant>_<set>_<book>.jsonl; resumable."""
import json, os, sys, time, argparse, glob
import numpy as np, llama_cpp
M="/root/.local/share/BookReader/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
BOOKS={"new":["thinkjava2","py4e","physical_ai_textbook","economics_econometrics_godwin"],
       "bench":["thinkjava2","py4e","physical_ai_textbook","economics_econometrics_godwin"],
       "report":["biology_popgen_coop","computing_thinkcomplexity2","engineering_fluid_mechanics_duque","math_ladr4e","philosophy_forallx"]}
SYS=("You judge whether a sentence from a textbook directly answers a question. "
     "Answer Yes only if the sentence itself states the answer. "
     "Answer No if it merely mentions the topic, restates the question, introduces or announces the topic, "
     "or talks about something related without giving the answer.")
YES,NO=9454,2753  # 'Yes','No' (first token after 'assistant\n', no leading space)

def prompt_parts(v, q, cs, i):
    """returns (prefix, suffix) strings; prefix shared by all candidates of a question"""
    pre=f"<|im_start|>system\n{SYS}<|im_end|>\n<|im_start|>user\nQuestion: {q['question'].strip()}\n\n"
    s=cs[i]["sentence"].strip()
    if v=="v1":
        suf=f"Sentence: {s}\n\nDoes this sentence directly answer the question? Answer Yes or No.<|im_end|>\n<|im_start|>assistant\n"
    elif v=="v2":  # with the next matching candidate on the same page as context? use following sentence if available
        suf=f"Sentence: {s}\n\nDoes this sentence state the answer to the question? Answer Yes or No.<|im_end|>\n<|im_start|>assistant\n"
    else: raise SystemExit("unknown variant")
    return pre, suf

def main():
    ap=argparse.ArgumentParser(); ap.add_argument("--sets",default="new,bench,report"); ap.add_argument("--variant",default="v1")
    ap.add_argument("--k",type=int,default=6); ap.add_argument("--limit",type=int,default=0); ap.add_argument("--books",default="")
    a=ap.parse_args()
    llm=llama_cpp.Llama(model_path=M,n_ctx=1024,n_threads=1,n_threads_batch=1,logits_all=False,verbose=False)
    nv=llm.n_vocab()
    tok=lambda s: llm.tokenize(s.encode(),add_bos=False,special=True)
    tot_c=0; tot_t=0.0; tot_q=0
    for st in a.sets.split(","):
        for b in BOOKS[st]:
            if a.books and b not in a.books.split(","): continue
            out=f"/work/llmrank/scores_{st}_{b}.jsonl" if a.variant=="v1" else f"/work/llmrank/scores_{a.variant}_{st}_{b}.jsonl"
            done=set()
            if os.path.exists(out):
                for l in open(out):
                    try: r=json.loads(l); done.add((r["qi"],r["ci"]))
                    except Exception: pass
            fo=open(out,"a")
            qs=[json.loads(l) for l in open(f"/work/rk_dump/{st}/{b}.jsonl")]
            nq=0
            for qi,q in enumerate(qs):
                cs=[c for c in q["candidates"] if c["matches"]][:a.k]
                todo=[i for i in range(len(cs)) if (qi,i) not in done]
                if not todo: continue
                if a.limit and nq>=a.limit: break
                nq+=1; t0=time.time()
                pre,_=prompt_parts(a.variant,q,cs,0); ptok=tok(pre)
                llm.reset(); llm.eval(ptok); P=len(ptok)
                for i in todo:
                    _,suf=prompt_parts(a.variant,q,cs,i); stok=tok(suf)
                    if P+len(stok)>1000: stok=stok[:1000-P-12]+tok("\n\nAnswer Yes or No.<|im_end|>\n<|im_start|>assistant\n")
                    llm.n_tokens=P  # reuse shared prefix KV; eval() drops everything after n_tokens
                    llm.eval(stok)
                    lg=np.ctypeslib.as_array(llm._ctx.get_logits(),shape=(nv,))
                    sc=float(lg[YES]-lg[NO])
                    fo.write(json.dumps({"qi":qi,"ci":i,"question":q["question"],"sentence":cs[i]["sentence"][:80],"score":round(sc,4),"label":cs[i]["label"]})+"\n")
                fo.flush()
                dt=time.time()-t0; tot_t+=dt; tot_c+=len(todo); tot_q+=1
                if tot_q%10==0: print(f"{st}/{b} q{qi} {tot_q} q done, {tot_t/tot_c:.3f} s/cand, {tot_t/tot_q:.2f} s/q",flush=True)
            fo.close()
    if tot_c: print(f"DONE {tot_q} questions {tot_c} cands {tot_t:.0f}s: {tot_t/tot_c:.3f} s/cand {tot_t/tot_q:.2f} s/q",flush=True)
if __name__=="__main__": main()

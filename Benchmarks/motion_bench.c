// Per-stage CPU time of the motion kernel (Benchmarks/results/motion-estimation.md): raw 8-bit grey frames in,
// the mean prepare and estimate times (CLOCK_THREAD_CPUTIME_ID) over three passes out.
//   ffmpeg -v error -i CLIP -f rawvideo -pix_fmt gray FRAMES.gray
//   cc -std=c11 -O2 -I Sources/CPlaneKernels/include Sources/CPlaneKernels/motion.c Benchmarks/motion_bench.c -lm
//      -o /tmp/motion_bench
//   /tmp/motion_bench FRAMES.gray W H [max_width]      (at most 200 frames are read)
#define _POSIX_C_SOURCE 200809L
#include "CPlaneKernels.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
int main(int argc,char**argv){
  int W=atoi(argv[2]),H=atoi(argv[3]),mw=argc>4?atoi(argv[4]):CZ_MOTION_ANALYSIS_WIDTH;
  FILE*f=fopen(argv[1],"rb"); size_t fs=(size_t)W*H; uint8_t*buf=malloc(fs*200); if(!f||!buf) return 1; size_t n=fread(buf,fs,200,f); fclose(f); if(n<2) return 1;
  cz_motion_geometry g; cz_motion_geometry_init(&g,W,H,cz_motion_factor(W,mw));
  cz_motion_frame*fr[2]={cz_motion_frame_new(&g),cz_motion_frame_new(&g)}; cz_motion*c=cz_motion_new(&g);
  double tp=0,te=0; double out[4]; cz_motion_stats st;
  for(int rep=0;rep<3;rep++) for(size_t i=0;i<n;i++){ double t0=now(); cz_motion_frame_prepare_luma(fr[i&1],buf+i*fs,W,1,8); double t1=now(); tp+=t1-t0;
    if(i){cz_motion_estimate(c,fr[(i+1)&1],fr[i&1],out,&st); te+=now()-t1;} }
  printf("%dx%d analysis %dx%d levels %d: prepare %.3f ms, estimate %.3f ms (cpu)\n",W,H,g.analysis_width,g.analysis_height,g.levels,tp/(3*n),te/(3*(n-1)));
}

// How the chat writes times and days: the time on a bubble, the day above a day's first message ("Today",
// "Yesterday", else the date), and a full date and time in a message's details. In the user's locale and time zone.
// For the browser and Node.

/** The calendar day of a time, in the local time zone: two times are on one day when their keys are equal. */
export function dayKey(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
}

/** "Today", "Yesterday", else the weekday and date (with the year when it is not this year's). */
export function dayLabel(ms, nowMs = Date.now()) {
  if (dayKey(ms) === dayKey(nowMs)) {
    return 'Today';
  }
  const yesterday = new Date(nowMs);
  yesterday.setDate(yesterday.getDate() - 1);
  if (dayKey(ms) === dayKey(yesterday.getTime())) {
    return 'Yesterday';
  }
  const sameYear = new Date(ms).getFullYear() === new Date(nowMs).getFullYear();
  return new Date(ms).toLocaleDateString(undefined, {
    weekday: 'long', day: 'numeric', month: 'long', ...(sameYear ? {} : { year: 'numeric' }),
  });
}

/** The hour and minute, as on a bubble. */
export function timeLabel(ms) {
  return new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** Day and time, as in a message's details: "Today 14:03", "Yesterday 09:12", "Monday, 3 March 18:40". */
export function dayTimeLabel(ms, nowMs = Date.now()) {
  return `${dayLabel(ms, nowMs)} ${timeLabel(ms)}`;
}
